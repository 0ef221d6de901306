// The optional LDAP directory of the auth route group: login tries it first,
// then the built-in users (shared/auth/ldap.ts). Its private CA is the
// LDAP_CA_CERT secret.
import * as z from '../zod.js';
import { Role } from '../auth/roles.js';
import { defineSettings, flag, whole } from './env.js';

/** `alice=admin,bob=superadmin`: roles for LDAP users on their first login (lower-cased usernames). */
const RoleMap = z.pipe(
  z.string().check(z.maxLength(10_000)),
  z.transform((raw: string, ctx) => {
    const map = new Map<string, Role>();
    for (const pair of raw.split(',').filter((p) => p.trim())) {
      const [user, role] = pair.split('=').map((s) => s.trim());
      const parsed = Role.safeParse(role);
      if (!user || !parsed.success) {
        ctx.issues.push({
          code: 'custom',
          message: `LDAP_ROLE_MAP must be user=role pairs (roles: ${Role.options.join(', ')}), separated by commas`,
          input: raw,
        });
        return z.NEVER;
      }
      map.set(user.toLowerCase(), parsed.data);
    }
    return map;
  }),
);

export const ldapSettings = defineSettings(
  'ldap',
  () => ({
    LDAP_URL: z.optional(z.string().check(z.regex(/^ldaps?:\/\/[^\s]+$/i, { error: 'LDAP_URL must be an ldap:// or ldaps:// URL' }))),
    LDAP_USER_DN_TEMPLATE: z.optional(z.string().check(z.includes('{username}', { error: 'LDAP_USER_DN_TEMPLATE must contain {username}' }))),
    // Per operation; a login makes up to four in a row (connect, StartTLS, bind, search): inside the route's 29 s.
    LDAP_TIMEOUT_MS: whole('LDAP_TIMEOUT_MS', 5000, 100, 6000, ' of milliseconds'),
    LDAP_BACKOFF_SECONDS: whole('LDAP_BACKOFF_SECONDS', 30, 0, 86_400, ' of seconds'),
    LDAP_STARTTLS: flag('LDAP_STARTTLS', false),
    LDAP_ROLE_MAP: z.optional(RoleMap),
  }),
  {
    secrets: ['LDAP_CA_CERT'],
    derive: (v) => ({
      /** Both the URL and the DN template: otherwise login uses built-in users only. */
      configured: Boolean(v.LDAP_URL && v.LDAP_USER_DN_TEMPLATE),
      url: v.LDAP_URL ?? '',
      userDnTemplate: v.LDAP_USER_DN_TEMPLATE ?? '',
      timeoutMs: v.LDAP_TIMEOUT_MS,
      backoffMs: v.LDAP_BACKOFF_SECONDS * 1000,
      startTls: v.LDAP_STARTTLS,
      roleFor: (username: string): Role => v.LDAP_ROLE_MAP?.get(username.toLowerCase()) ?? 'viewer',
    }),
  },
);
