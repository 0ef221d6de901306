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
import { isIP } from 'node:net';
import { Role } from './roles.js';
import { secret } from './secrets.js';
import { createLogger, errorFields } from '../log.js';

const log = createLogger('ldap');

export interface LdapIdentity {
  name: string;
  email: string;
  /** From LDAP_ROLE_MAP; otherwise viewer. */
  role: Role;
}

export function ldapConfigured(): boolean {
  return Boolean(process.env.LDAP_URL && process.env.LDAP_USER_DN_TEMPLATE);
}

/** RFC 4514 escaping of an attribute value, so a username cannot rewrite the DN. */
export function escapeDnValue(value: string): string {
  return value
    .replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)
    .replace(/^[ #]/, (c) => `\\${c}`)
    .replace(/ $/, '\\ ')
    .replace(/\0/g, '\\00');
}

/** `alice=admin,bob=superadmin`: roles for LDAP users on their first login. */
function mappedRole(username: string): Role {
  for (const pair of (process.env.LDAP_ROLE_MAP ?? '').split(',')) {
    const [user, role] = pair.split('=').map((s) => s.trim());
    const parsed = Role.safeParse(role);
    if (user?.toLowerCase() === username.toLowerCase() && parsed.success) return parsed.data;
  }
  return 'viewer';
}

const DEFAULT_BACKOFF_SECONDS = 30;

/** Per container and per server URL: when LDAP may be tried again after an outage (epoch ms). */
const unavailableUntil = new Map<string, number>();

function backoffMs(): number {
  const seconds = Number(process.env.LDAP_BACKOFF_SECONDS ?? DEFAULT_BACKOFF_SECONDS);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : DEFAULT_BACKOFF_SECONDS * 1000;
}

/** True while this container skips LDAP after an outage of the configured server. */
export function ldapBackingOff(now = Date.now()): boolean {
  const until = unavailableUntil.get(process.env.LDAP_URL ?? '');
  return until !== undefined && now < until;
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

/** The identity when LDAP accepts the credentials; null when it refuses them, cannot be reached, or is backing off. */
export async function ldapAuthenticate(username: string, password: string): Promise<LdapIdentity | null> {
  // An empty password is an "unauthenticated bind" that many servers accept: never send one.
  if (!ldapConfigured() || password.length === 0) return null;
  const url = process.env.LDAP_URL!;
  if (ldapBackingOff()) return null;
  const dn = process.env.LDAP_USER_DN_TEMPLATE!.replaceAll('{username}', escapeDnValue(username));
  const timeout = Number(process.env.LDAP_TIMEOUT_MS ?? 5000);
  // Loaded on first use: deployments without LDAP never evaluate the client.
  const { Client, InvalidCredentialsError, ResultCodeError } = await import('ldapts');
  let client: InstanceType<typeof Client> | undefined;
  try {
    const ca = await privateCa();
    const secure = url.toLowerCase().startsWith('ldaps://');
    // ldapts speaks TLS whenever tlsOptions are given, so ldap:// gets them only through StartTLS.
    client = new Client({ url, timeout, connectTimeout: timeout, ...(secure && ca ? { tlsOptions: { ca: [ca] } } : {}) });
    if (!secure && process.env.LDAP_STARTTLS === 'true') {
      // The certificate must name the host of LDAP_URL (SNI only for names, not IP addresses).
      const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
      await client.startTLS({ host, ...(isIP(host) ? {} : { servername: host }), ...(ca ? { ca: [ca] } : {}) });
    }
    await client.bind(dn, password);
    const { searchEntries } = await client.search(dn, { scope: 'base', attributes: ['cn', 'displayName', 'mail'] });
    const entry = searchEntries[0] ?? { dn };
    const first = (v: unknown) => (Array.isArray(v) ? v[0] : v)?.toString();
    return {
      name: first(entry.displayName) ?? first(entry.cn) ?? username,
      email: first(entry.mail) ?? (username.includes('@') ? username : ''),
      role: mappedRole(username),
    };
  } catch (error) {
    if (error instanceof InvalidCredentialsError) return null;
    if (error instanceof ResultCodeError) {
      log.warn('LDAP refused the login, using built-in users', errorFields(error));
    } else {
      // No answer: connection refused, timeout, TLS failure. Skip LDAP for a while.
      const seconds = backoffMs() / 1000;
      if (seconds > 0) unavailableUntil.set(url, Date.now() + backoffMs());
      log.warn('LDAP unavailable, using built-in users', { ...errorFields(error), backoff_seconds: seconds });
    }
    return null;
  } finally {
    await client?.unbind().catch(() => undefined);
  }
}
