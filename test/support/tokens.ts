// Signs real access tokens for tests with the service's own signer.
import { randomBytes } from 'node:crypto';
import { resetSigningKey, signAccessToken } from '../../shared/auth/jwt.js';
import type { Role } from '../../shared/auth/roles.js';

export const TEST_JWT_SECRET = randomBytes(48).toString('base64url');

export function useTestJwtSecret(secret = TEST_JWT_SECRET): void {
  process.env.JWT_SECRET = secret;
  resetSigningKey();
}

export function tokenFor(role: Role, username = `${role}-user`): Promise<string> {
  return signAccessToken({ userId: `id-${username}`, username, name: `The ${role}`, email: `${username}@example.com`, role });
}
