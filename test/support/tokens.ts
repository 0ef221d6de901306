// Real access tokens for tests, signed with the service's own signer.
import { randomBytes } from 'node:crypto';
import { resetSigningKey, signAccessToken } from '../../shared/auth/jwt.js';
import { hashPassword } from '../../shared/auth/passwords.js';
import type { Role } from '../../shared/auth/roles.js';
import { createUser, getUser } from '../../shared/db/users.js';

export const TEST_JWT_SECRET = randomBytes(48).toString('base64url');

export function useTestJwtSecret(secret = TEST_JWT_SECRET): void {
  process.env.JWT_SECRET = secret;
  resetSigningKey();
}

/** A token only: no account behind it (the middleware will refuse it). */
export function signedToken(role: Role, username = `${role}-user`): Promise<string> {
  return signAccessToken({ userId: `id-${username}`, username, name: `The ${role}`, email: `${username}@example.com`, role });
}

/** An active account with this role (created when absent) and a token for it. */
export async function userToken(role: Role, username = `${role}-user`): Promise<string> {
  const user = (await getUser(username)) ?? (await createUser({ username, name: `The ${role}`, email: `${username}@example.com`, role, is_active: true }));
  return signAccessToken({ userId: user.id, username: user.username, name: user.name, email: user.email, role: user.role });
}

/** An active built-in account that signs in with `password` (`<username>@example.org`, named after it). */
export async function passwordUser(username: string, password: string, role: Role = 'viewer'): Promise<void> {
  const name = username.charAt(0).toUpperCase() + username.slice(1);
  await createUser({ username, name, email: `${username}@example.org`, role, is_active: true, password_hash: await hashPassword(password) });
}
