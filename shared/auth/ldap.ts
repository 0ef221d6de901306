// Optional external authentication: an LDAP simple bind (ldapts) as the user,
// then a base-scope read of their entry for display name and mail. Any failure
// other than wrong credentials is logged and treated as "LDAP said nothing", so
// login falls back to the built-in users, as the spec requires.
import { Role } from './roles.js';
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

/** The identity when LDAP accepts the credentials; null when it refuses them or cannot be reached. */
export async function ldapAuthenticate(username: string, password: string): Promise<LdapIdentity | null> {
  // An empty password is an "unauthenticated bind" that many servers accept: never send one.
  if (!ldapConfigured() || password.length === 0) return null;
  const dn = process.env.LDAP_USER_DN_TEMPLATE!.replaceAll('{username}', escapeDnValue(username));
  const timeout = Number(process.env.LDAP_TIMEOUT_MS ?? 5000);
  // Loaded on first use: deployments without LDAP never evaluate the client.
  const { Client, InvalidCredentialsError } = await import('ldapts');
  const client = new Client({ url: process.env.LDAP_URL!, timeout, connectTimeout: timeout });
  try {
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
    if (!(error instanceof InvalidCredentialsError)) log.warn('LDAP unavailable, using built-in users', errorFields(error));
    return null;
  } finally {
    await client.unbind().catch(() => undefined);
  }
}
