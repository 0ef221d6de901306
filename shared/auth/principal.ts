// Who is calling: a verified token names an account; the account record decides
// whether it still may call (exists, active, same account id, token not revoked,
// its session signed in after the account's last deactivation, password change or reset, signed after its
// password as it is now)
// and with which role.
import { createHash } from 'node:crypto';
import { isTokenRevoked } from '../db/sessions.js';
import { getUser, type UserRecord } from '../db/users.js';
import type { Role } from './roles.js';

/** The caller of an authenticated route, as the account record says now. */
export interface Principal {
  readonly userId: string;
  readonly username: string;
  readonly name: string;
  readonly email: string;
  readonly role: Role;
}

export function principalOf(user: UserRecord): Principal {
  return { userId: user.id, username: user.username, name: user.name, email: user.email, role: user.role };
}

/**
 * The password a token was signed after, as the token carries it (`cred`): a digest of the account's stored hash
 * (salted, so every change or reset gives another), none for an account without one (LDAP's). A token whose stamp
 * is not the account's now was signed from the account as read before its password changed, whenever it was
 * signed: a login that checked the old password while the change was being written (tokens_valid_from, a time,
 * cannot tell it from a later login). Sixteen characters (96 bits) of SHA-256: the holder reads it, and it names
 * nothing a password could be guessed from.
 */
export function credentialStamp(user: Pick<UserRecord, 'password_hash'>): string | undefined {
  return user.password_hash ? createHash('sha256').update(user.password_hash).digest('base64url').slice(0, 16) : undefined;
}

/** `token`: a verified token (shared/auth/jwt.ts's VerifiedToken; named by shape so jwt.ts, which types its claims with Principal, is not imported back). */
export async function resolvePrincipal(token: {
  readonly principal: Principal;
  readonly tokenId: string;
  readonly authTime: number;
  readonly credential?: string;
}): Promise<Principal | null> {
  const [user, revoked] = await Promise.all([getUser(token.principal.username), isTokenRevoked(token.tokenId)]);
  if (!user?.is_active || revoked || user.id !== token.principal.userId) return null;
  // A reactivation does not bring back the sessions signed in before the deactivation: compared with the
  // session's sign-in, not the token's iat, so a renewal signed while the deactivation was written is refused too.
  if (user.tokens_valid_from !== undefined && token.authTime < user.tokens_valid_from) return null;
  // Tokens signed before stamps were (none) end only by the time above.
  if (token.credential !== undefined && token.credential !== credentialStamp(user)) return null;
  return principalOf(user);
}
