// The local server's security headers, as CloudFront's response headers policies add them on AWS
// (test/infra/stack.test.ts checks those): the console's answers carry its CSP, which no page may
// frame (frame-ancestors 'none', X-Frame-Options DENY), and every API answer carries the API's
// policy with the same nosniff, frame and referrer headers, also when Node's parser refuses a request. The real route-group handlers, as
// `npm start` loads them, behind the server, with a console build of one page.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { type Server, STATUS_CODES } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalServer, loadGroupHandlers } from '../../infra/local/server.js';
import { BUILT_POLICY } from '../../infra/web/csp.js';
import { useTestTables } from '../support/dynamo.js';
import { useTestJwtSecret } from '../support/tokens.js';

let server: Server;
let base: string;

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  const webRoot = await mkdtemp(join(tmpdir(), 'fleet-web-'));
  await writeFile(join(webRoot, 'index.html'), '<!doctype html><title>Fleet Health</title>');
  server = createLocalServer({ handlers: await loadGroupHandlers(), webRoot });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((r) => server?.close(() => r()));
});

const headersOf = async (path: string, init?: RequestInit) => {
  const res = await fetch(`${base}${path}`, init);
  await res.arrayBuffer();
  return { status: res.status, headers: res.headers };
};

describe('local server security headers', () => {
  it('sends the console its CSP with frame-ancestors none, X-Frame-Options DENY, nosniff and a referrer policy', async () => {
    for (const path of ['/', '/fleet', '/index.html']) {
      const { status, headers } = await headersOf(path);
      expect(status, path).toBe(200);
      expect(headers.get('content-security-policy'), path).toBe(`${BUILT_POLICY.replace('frame-src *', "frame-src 'none'")}; frame-ancestors 'none'`);
      expect(headers.get('x-frame-options'), path).toBe('DENY');
      expect(headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(headers.get('referrer-policy'), path).toBe('strict-origin-when-cross-origin');
    }
  });

  it('sends every API answer the API policy and the same headers: a route, the 404 fallback, a refused path', async () => {
    for (const [path, expected] of [
      ['/api/health-check', 200],
      ['/api/nope', 404],
      ['/api/%zz', 400],
    ] as const) {
      const { status, headers } = await headersOf(path);
      expect(status, path).toBe(expected);
      expect(headers.get('content-security-policy'), path).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(headers.get('x-frame-options'), path).toBe('DENY');
      expect(headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(headers.get('referrer-policy'), path).toBe('strict-origin-when-cross-origin');
    }
  });
});

/** What the server answers `raw`, sent as it is on one connection: the status line, headers and body. */
async function rawExchange(raw: string): Promise<{ status: number; headers: Map<string, string>; body: string }> {
  const { port } = server.address() as AddressInfo;
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  await new Promise<void>((r) => socket.on('connect', () => r()));
  socket.write(raw);
  await new Promise<void>((r) => socket.on('close', () => r()));
  const [head = '', body = ''] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

describe('requests the HTTP parser refuses', () => {
  it('answers them as problem+json with the API headers (431 for headers over 16 KB, 400 for a malformed request), not a bare status line', async () => {
    for (const [raw, status, detail] of [
      [`GET /api/issues?search=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`, 431, 'The request’s headers are over 16 KB.'],
      ['POST /api/ingest HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n', 400, 'The request is not valid HTTP/1.1.'],
    ] as const) {
      const answer = await rawExchange(raw);
      expect(answer.status).toBe(status);
      expect(answer.headers.get('content-type')).toBe('application/problem+json');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(JSON.parse(answer.body)).toEqual({ type: 'about:blank', title: STATUS_CODES[status], status, detail });
    }
  });
});
