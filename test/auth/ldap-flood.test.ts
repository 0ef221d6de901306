// An LDAP server that answers without end, spoken on the wire by a local TCP server: a login reads
// at most LDAP_ANSWER_MAX_BYTES from it (ldapts alone would buffer a message until it is whole,
// however long its header says, and keep every entry of a search), a chunk of thousands of small
// messages does not overflow ldapts's parser (it recurses once a message), and the login falls
// back to the built-in users with the cause logged.
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LDAP_ANSWER_MAX_BYTES, ldapAuthenticate } from '../../shared/auth/ldap.js';
import { captureLogLines } from '../support/log-lines.js';

vi.hoisted(() => {
  process.env.LOG_LEVEL = 'warn'; // the logger reads it when created, at import
});

const LDAP_VARS = ['LDAP_URL', 'LDAP_USER_DN_TEMPLATE', 'LDAP_TIMEOUT_MS', 'LDAP_BACKOFF_SECONDS'];
afterEach(() => {
  for (const v of LDAP_VARS) delete process.env[v];
});

/** The message id of the first LDAPMessage in `bytes` (SEQUENCE, then the INTEGER id). */
function messageIdOf(bytes: Buffer): number {
  const lengthBytes = bytes[1]! & 0x80 ? bytes[1]! & 0x7f : 0;
  const at = 2 + lengthBytes; // 02 <n> <id>
  return bytes.readUIntBE(at + 2, bytes[at + 1]!);
}

/** A BER element: tag, definite length (short or long form), content. */
function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : n < 0x10000 ? [0x82, n >> 8, n & 0xff] : [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}
const text = (value: string) => tlv(0x04, Buffer.from(value));
/** An LDAPMessage: SEQUENCE { INTEGER id (below 128), <protocol op> }. */
const ldapMessage = (id: number, op: Buffer) => tlv(0x30, Buffer.from([0x02, 0x01, id]), op);
const SUCCESS = Buffer.concat([Buffer.from([0x0a, 0x01, 0x00]), text(''), text('')]);
/** BindResponse [APPLICATION 1] and SearchResultDone [APPLICATION 5]: success, no DN, no message. */
const BIND_OK = tlv(0x61, SUCCESS);
const SEARCH_DONE = tlv(0x65, SUCCESS);
/** SearchResultEntry [APPLICATION 4] { objectName, attributes: SEQUENCE OF { type, SET OF value } }. */
const entry = (dn: string, attributes: Record<string, string> = {}) =>
  tlv(0x64, text(dn), tlv(0x30, ...Object.entries(attributes).map(([type, value]) => tlv(0x30, text(type), tlv(0x31, text(value))))));
const EMPTY_ENTRY = entry('x');

/**
 * Answers the bind, then the entry read with `chunk` after `chunk` until the client goes (or once, with
 * `once`). What it got written by then (the sockets' buffers included) is what the client let it send.
 */
async function answeringServer(chunkFor: (searchId: number) => Buffer, once = false) {
  let written = 0;
  let wentAway: (written: number) => void = () => undefined;
  const closed = new Promise<number>((r) => (wentAway = r));
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.on('close', () => wentAway(written));
    let requests = 0;
    socket.on('data', (request: Buffer) => {
      requests += 1;
      const id = messageIdOf(request);
      if (requests === 1) return void socket.write(ldapMessage(id, BIND_OK));
      if (requests > 2) return; // the unbind
      const chunk = chunkFor(id);
      const pump = () => {
        while (!socket.destroyed && written < 512 * 1024 * 1024) {
          written += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
          if (once) return;
        }
      };
      pump();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `ldap://127.0.0.1:${(server.address() as AddressInfo).port}`,
    closed,
    close: () => new Promise((r) => server.close(r)),
  };
}

describe('an LDAP server that answers without end', () => {
  const cases: [string, (id: number) => Buffer][] = [
    // A SEQUENCE of 256 MB announced (a four-byte length), then filler.
    [
      'one message whose header announces 256 MB',
      (id) => Buffer.concat([Buffer.from([0x30, 0x84, 0x10, 0, 0, 0, 0x02, 0x01, id]), Buffer.alloc(64 * 1024 - 9, 0x41)]),
    ],
    // Entry after entry of the search, 64 KB of them at a time.
    ['entries of a few bytes, thousands to a chunk', (id) => Buffer.concat(Array.from({ length: 5000 }, () => ldapMessage(id, EMPTY_ENTRY)))],
    // The same, one entry a write: no chunk holds many, the total grows all the same.
    ['entries of a few bytes, one to a write', (id) => ldapMessage(id, EMPTY_ENTRY)],
  ];
  it.each(cases)('%s: the login stops reading past LDAP_ANSWER_MAX_BYTES, cuts the connection and falls back', async (_, chunkFor) => {
    const server = await answeringServer(chunkFor);
    try {
      Object.assign(process.env, {
        LDAP_URL: server.url,
        LDAP_USER_DN_TEMPLATE: 'uid={username},ou=people,dc=example,dc=org',
        LDAP_TIMEOUT_MS: '6000',
        LDAP_BACKOFF_SECONDS: '0',
      });
      const logs = captureLogLines();
      expect(await ldapAuthenticate('alice', 'alice-secret')).toBe('unavailable');
      const warning = logs.stop().find((l) => l.message === 'LDAP unavailable, using built-in users');
      expect(warning?.error_message).toContain(`the LDAP server sent more than ${LDAP_ANSWER_MAX_BYTES} bytes for one login`);
      // The bound, plus what the sockets' buffers held when the client went.
      expect(await server.closed).toBeLessThan(LDAP_ANSWER_MAX_BYTES + 32 * 1024 * 1024);
    } finally {
      await server.close();
    }
  });

  it('a whole answer under the bound is read as before: thousands of messages in one write, an entry across slices', async () => {
    const server = await answeringServer(
      (id) =>
        Buffer.concat([
          ldapMessage(
            id,
            entry('uid=alice,ou=people,dc=example,dc=org', {
              uid: 'alice',
              displayName: 'Alice Flood',
              mail: 'alice@example.org',
              description: 'd'.repeat(10_000),
            }),
          ),
          ...Array.from({ length: 3000 }, () => ldapMessage(id, EMPTY_ENTRY)),
          ldapMessage(id, SEARCH_DONE),
        ]),
      true,
    );
    try {
      Object.assign(process.env, { LDAP_URL: server.url, LDAP_USER_DN_TEMPLATE: 'uid={username},ou=people,dc=example,dc=org', LDAP_BACKOFF_SECONDS: '0' });
      expect(await ldapAuthenticate('alice', 'alice-secret')).toEqual({ username: 'alice', name: 'Alice Flood', email: 'alice@example.org', role: 'viewer' });
    } finally {
      await server.close();
    }
  });
});
