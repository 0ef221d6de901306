// Optional external authentication: an LDAP simple bind (ldapts) as the user,
// then a base-scope read of their entry for display name and mail. Any failure
// other than wrong credentials is logged and treated as "LDAP said nothing", so
// login falls back to the built-in users, as the spec requires.
//
// TLS: ldaps:// URLs, or ldap:// with LDAP_STARTTLS=true, verify the server
// certificate against LDAP_CA_CERT (PEM text, or on AWS the secret named by
// LDAP_CA_CERT_ARN) when it holds a certificate, else against Node's public CAs.
//
// Back-off: after a connection failure or timeout, this container skips LDAP
// for LDAP_BACKOFF_SECONDS (30 s), so an outage costs one login the timeout
// instead of every login. An answer from the server (even an error) is no outage.
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { Entry, Client as LdapClient } from 'ldapts';
import { ldapSettings } from '../config/ldap.js';
import { secret } from '../config/secrets.js';
import { spoofsAnotherName } from '../text.js';
import { createLogger, errorFields } from '../log.js';
import type { Role } from './roles.js';
import { canonicalEmail, canonicalUsername } from './username.js';

const log = createLogger('ldap');

export interface LdapIdentity {
  /** The account's username: the entry's own uid (canonical form), or the login name when the entry has none. */
  username: string;
  name: string;
  /** The entry's first `mail` that is a valid address (canonical form), else the uid when it is one; absent otherwise. */
  email?: string;
  /** From LDAP_ROLE_MAP; otherwise viewer. */
  role: Role;
}

/** The cleartext URLs this container has warned of, once each. */
const warnedCleartext = new Set<string>();

/** The LDAP settings, or null when LDAP is not configured. A bad setting is logged (naming the variable) and LDAP stays off: built-in login keeps working. */
function settings(): ReturnType<typeof ldapSettings> | null {
  try {
    const s = ldapSettings();
    if (s.configured && !s.startTls && /^ldap:/i.test(s.url) && !warnedCleartext.has(s.url)) {
      // Allowed (a directory on a private link), but every directory login's password then crosses the network as typed.
      warnedCleartext.add(s.url);
      log.warn('LDAP_URL is ldap:// without LDAP_STARTTLS: directory passwords are sent unencrypted; use ldaps:// or LDAP_STARTTLS=true');
    }
    return s.configured ? s : null;
  } catch (error) {
    log.error('LDAP is misconfigured, using built-in users only', errorFields(error));
    return null;
  }
}

export function ldapConfigured(): boolean {
  return settings() !== null;
}

/** RFC 4514 escaping of an attribute value, so a username cannot rewrite the DN. */
export function escapeDnValue(value: string): string {
  return value
    .replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)
    .replace(/^[ #]/, (c) => `\\${c}`)
    .replace(/ $/, '\\ ')
    .replace(/\0/g, '\\00');
}

/** Per container and per server URL: when LDAP may be tried again after an outage (epoch ms). */
const unavailableUntil = new Map<string, number>();

/** True while this container skips LDAP after an outage of the configured server. */
export function ldapBackingOff(now = Date.now()): boolean {
  const until = unavailableUntil.get(settings()?.url ?? '');
  return until !== undefined && now < until;
}

/** Seconds until this container asks the directory again after an outage; at least 5 (sooner meets the same outage). */
export function ldapRetryAfterSeconds(now = Date.now()): number {
  const until = unavailableUntil.get(settings()?.url ?? '') ?? 0;
  return Math.max(5, Math.ceil((until - now) / 1000));
}

/** The private CA's PEM, when LDAP_CA_CERT (or its secret) holds one; otherwise Node's public CAs apply. */
async function privateCa(): Promise<string | undefined> {
  const value = await secret('LDAP_CA_CERT');
  if (!value) return undefined;
  if (!value.includes('-----BEGIN CERTIFICATE-----')) {
    // The stack creates the secret with a placeholder: until a PEM is put there, the public CAs apply.
    log.debug('LDAP_CA_CERT holds no PEM certificate; using the public CAs');
    return undefined;
  }
  return value;
}

/** The longest display name an account takes from the directory (an invitation's bound). */
const NAME_MAX = 128;

/** An attribute's values as text (ldapts answers one value or a list). */
const valuesOf = (v: unknown): string[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]).map(String);

/**
 * The account an entry logs in as: its own uid, so a name that merely reaches the same entry
 * makes no second account. The login name when it is one of the uid values or there is no uid;
 * null when the directory's uid has no canonical form.
 */
function accountName(loginName: string, uid: unknown): string | null {
  const values = valuesOf(uid).map(canonicalUsername);
  if (values.length === 0 || values.includes(loginName)) return loginName;
  return values[0] ?? null;
}

/**
 * The most a server may send over one login's connection. A bind answer and an entry's four
 * attributes are a few kilobytes, but ldapts buffers a message until it is whole, however long
 * its BER header says it is, and keeps every entry a search answers: past this the connection is cut.
 */
export const LDAP_ANSWER_MAX_BYTES = 1024 * 1024;
/**
 * ldapts's parser calls itself once for each whole message in what it is given, so a read of 64 KB
 * of 7-byte messages overflows the stack (an uncaught RangeError in the socket's handler). Fed in
 * slices this size, it holds at most ≈ 600 messages at once.
 */
const PARSE_SLICE_BYTES = 4096;

/**
 * Feeds ldapts's parser what the server sends (the plain text, after StartTLS) in slices, counting it:
 * past `maxBytes`, or when the parser throws, the connection is cut and the login's requests fail.
 */
function boundAnswers(client: LdapClient, maxBytes: number): void {
  // ldapts 8 reads its socket through this instance field, attached on connect and again after StartTLS.
  // test/auth/ldap-flood.test.ts catches a version that no longer does.
  const internals = client as unknown as { socketDataHandler?: (data: Buffer) => void; socket?: { destroy(error: Error): void } };
  const read = internals.socketDataHandler;
  if (typeof read !== 'function') throw new Error('ldapts no longer reads its socket through socketDataHandler; the LDAP answer bound needs updating');
  let received = 0;
  internals.socketDataHandler = (data) => {
    received += data.length;
    if (received > maxBytes) return internals.socket?.destroy(new Error(`the LDAP server sent more than ${maxBytes} bytes for one login`));
    try {
      for (let at = 0; at < data.length; at += PARSE_SLICE_BYTES) read(data.subarray(at, at + PARSE_SLICE_BYTES));
    } catch (error) {
      internals.socket?.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  };
}

/**
 * Why LDAP gave no identity: `refused`, the directory answered that these credentials are not an entry's
 * (or gives no usable account); `unavailable`, the password could not be checked (no answer, a TLS failure,
 * the back-off, a server error such as busy), so a login must not be told it is wrong.
 */
export type LdapFailure = 'refused' | 'unavailable';

/**
 * The identity when LDAP accepts the credentials, else why not (LdapFailure).
 * `username` must be canonical (shared/auth/username.ts): it goes into the bind DN as given.
 */
export async function ldapAuthenticate(username: string, password: string): Promise<LdapIdentity | LdapFailure> {
  // An empty password is an "unauthenticated bind" that many servers accept: never send one.
  const config = settings();
  if (!config || password.length === 0) return 'refused';
  const dn = config.userDnTemplate.replaceAll('{username}', escapeDnValue(username));
  return withDirectory(config, async (client, { InvalidCredentialsError, NoSuchObjectError, InsufficientAccessError, InvalidDNSyntaxError }) => {
    try {
      await client.bind(dn, password);
    } catch (error) {
      if (error instanceof InvalidCredentialsError) return 'refused';
      throw error;
    }
    // The bind checked the password. A directory may still refuse to read the entry back (no read access to one's
    // own entry answers noSuchObject; a bind name that is no DN, as AD's user@domain, invalidDNSyntax): the login
    // goes on with the DN alone (the login name as uid, no mail), not as an outage.
    const entry = await client.search(dn, { scope: 'base', attributes: ['uid', 'cn', 'displayName', 'mail'] }).then(
      ({ searchEntries }): Entry => searchEntries[0] ?? { dn },
      (error: unknown): Entry => {
        // Only a refusal of this read; busy, unavailable and the like are the outage they are.
        if (!(error instanceof NoSuchObjectError || error instanceof InsufficientAccessError || error instanceof InvalidDNSyntaxError)) throw error;
        log.warn('LDAP bind accepted but the entry could not be read; using the login name, without mail', errorFields(error));
        return { dn };
      },
    );
    const account = accountName(username, entry.uid);
    if (account === null) {
      log.warn('LDAP entry has a uid that is no valid username; LDAP not used for it');
      return 'refused';
    }
    // A directory name longer than an account's field holds is passed over: the account item must stay
    // writable (DynamoDB items hold 400 KB), and such a value is no name anyway.
    // So is one holding a character that makes it read as another's (bidirectional or zero-width: shared/text.ts).
    const first = (v: unknown, max: number) => {
      const text = valuesOf(v)[0]?.trim();
      return text && text.length <= max && !spoofsAnotherName(text) ? text : undefined;
    };
    // Only an address the settings routes can address the account by (sign-in refuses an account without one).
    const email = [...valuesOf(entry.mail), account].map(canonicalEmail).find((e) => e !== null);
    return {
      username: account,
      name: first(entry.displayName, NAME_MAX) ?? first(entry.cn, NAME_MAX) ?? account,
      ...(email ? { email } : {}),
      role: config.roleFor(account),
    };
  });
}

/**
 * Whether the directory takes a bind, asked with a name no entry has and a password no one has: what a built-in
 * account's login costs instead of its own bind. Its password never goes to the directory, yet the login pays a
 * bind's round trips and meets what a bind would (an outage, or binds refused over a plain connection: 503, not
 * 401), so which names are built-in stays unsaid. Only "invalid credentials" is the answer a working one gives;
 * a name no entry has touches no one's lockout in the directory.
 */
export async function ldapAnswers(): Promise<'answered' | 'unavailable'> {
  const config = settings();
  if (!config) return 'answered';
  const dn = config.userDnTemplate.replaceAll('{username}', escapeDnValue(`no-such-user-${randomUUID()}`));
  const answer = await withDirectory(config, async (client, { InvalidCredentialsError }) => {
    try {
      await client.bind(dn, randomUUID());
    } catch (error) {
      if (error instanceof InvalidCredentialsError) return 'answered' as const;
      throw error;
    }
    log.warn('LDAP accepted a bind as a name no entry should have; the directory takes any password for it');
    return 'answered' as const;
  });
  return answer === 'unavailable' ? 'unavailable' : 'answered';
}

type Ldapts = typeof import('ldapts');

/**
 * Runs `use` on a connection to the configured directory (TLS as configured, answers bounded), then unbinds. An
 * error it throws is 'unavailable': a result code (busy, unavailable, confidentiality required, …) is an answer not
 * about the password, with no back-off; no answer at all (refused, timeout, TLS failure) skips LDAP for the back-off.
 */
async function withDirectory<T>(
  config: NonNullable<ReturnType<typeof settings>>,
  use: (client: LdapClient, ldapts: Ldapts) => Promise<T>,
): Promise<T | 'unavailable'> {
  const { url, timeoutMs: timeout } = config;
  if (ldapBackingOff()) return 'unavailable';
  // Loaded on first use: deployments without LDAP never evaluate the client.
  const ldapts = await import('ldapts');
  let client: LdapClient | undefined;
  try {
    const ca = await privateCa();
    const secure = url.toLowerCase().startsWith('ldaps://');
    // ldapts speaks TLS whenever tlsOptions are given, so ldap:// gets them only through StartTLS.
    client = new ldapts.Client({ url, timeout, connectTimeout: timeout, ...(secure && ca ? { tlsOptions: { ca: [ca] } } : {}) });
    boundAnswers(client, LDAP_ANSWER_MAX_BYTES);
    if (!secure && config.startTls) {
      // The certificate must name the host of LDAP_URL (SNI only for names, not IP addresses).
      const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
      await client.startTLS({ host, ...(isIP(host) ? {} : { servername: host }), ...(ca ? { ca: [ca] } : {}) });
    }
    return await use(client, ldapts);
  } catch (error) {
    if (error instanceof ldapts.ResultCodeError) {
      log.warn('LDAP refused the login, using built-in users', errorFields(error));
    } else {
      const seconds = config.backoffMs / 1000;
      if (seconds > 0) unavailableUntil.set(url, Date.now() + config.backoffMs);
      log.warn('LDAP unavailable, using built-in users', { ...errorFields(error), backoff_seconds: seconds });
    }
    return 'unavailable';
  } finally {
    await client?.unbind().catch(() => undefined);
  }
}
