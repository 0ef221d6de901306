// Who is calling: a verified token names an account; the account record decides
// whether it still may call (exists, active, same account id, token not revoked,
// issued after the account's last deactivation) and with which role.
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

/** `token`: a verified token (shared/auth/jwt.ts's VerifiedToken; named by shape so jwt.ts, which types its claims with Principal, is not imported back). */
export async function resolvePrincipal(token: {
  readonly principal: Principal;
  readonly tokenId: string;
  readonly issuedAt: number;
}): Promise<Principal | null> {
  const [user, revoked] = await Promise.all([getUser(token.principal.username), isTokenRevoked(token.tokenId)]);
  if (!user?.is_active || revoked || user.id !== token.principal.userId) return null;
  // A reactivation does not bring back the tokens issued before the deactivation.
  if (user.tokens_valid_from !== undefined && token.issuedAt < user.tokens_valid_from) return null;
  return principalOf(user);
}
