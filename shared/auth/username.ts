// One canonical form per username, used for the lockout window, the account key
// and the LDAP bind DN alike. OpenLDAP matches `uid` after its own Unicode
// normalisation, so `ｃａｒｏｌ` or `c𝐚rol` bind as uid=carol: were any of them
// keyed apart here, each would get its own lockout window and its own account.
// Also the one form of an account's email, by which the settings routes address it.
import * as z from '../zod.js';

/** The longest username a login takes (LoginBody's bound). */
export const USERNAME_MAX = 256;

/**
 * What a canonical username holds: lowercase ASCII letters, digits and the other
 * characters an invitee's email address may hold (zod's email pattern). Anything
 * else (spaces, soft hyphens, zero-width and other Unicode) is refused outright
 * rather than mapped, since LDAP servers map such characters differently.
 */
export const CanonicalUsername = z.string().check(z.regex(/^[a-z0-9._@+'-]+$/), z.maxLength(USERNAME_MAX));

/** NFKC, then lowercase, then the allowed characters; null when the text is no username. */
export function canonicalUsername(raw: string): string | null {
  const parsed = CanonicalUsername.safeParse(raw.normalize('NFKC').toLowerCase().trim());
  return parsed.success ? parsed.data : null;
}

const EmailAddress = z.emailAddress();

/**
 * The form an account's email is stored and addressed in (`/api/settings/users/{email}` lowercases
 * and checks it the same way): trimmed and lowercased; null when it is no address the routes take,
 * since an account under such an email could never be addressed.
 */
export function canonicalEmail(raw: string): string | null {
  const parsed = EmailAddress.safeParse(raw.trim().toLowerCase());
  return parsed.success ? parsed.data : null;
}
