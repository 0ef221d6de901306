// The bootstrap superadmin: created once, so a fresh deployment or local database
// always has someone who can invite the rest. Once per username: a marker written
// with it keeps a deleted bootstrap account (a shared account retired by a
// superadmin) from coming back, with a new password, at the next start or stack
// update; another ADMIN_USERNAME is still made (the way back should every
// superadmin be lost). An account deleted before markers existed is made again
// once, at the first start that has them.
import { randomBytes } from 'node:crypto';
import { auditAction } from '../db/audit.js';
import { ConditionFailed } from '../db/client.js';
import { bootstrappedAction, createUser, EmailTaken, getUser, markBootstrapped, wasBootstrapped } from '../db/users.js';
import { hashPassword } from './passwords.js';
import { canonicalEmail, canonicalUsername } from './username.js';

export interface BootstrapResult {
  created: boolean;
  username: string;
  /** Only when this call generated the password: shown to the operator once. */
  generatedPassword?: string;
}

/**
 * Creates the bootstrap superadmin `configured` unless it was made once already. Without `password` one is generated,
 * and handed to `keep` (where the operator will read it) before the account is written: a start that dies after the
 * write (killed, or DynamoDB's answer lost) otherwise left a superadmin whose password nobody had, and no later start
 * makes it again. A password kept for an account that was then not made is only a stale file (the next start replaces it).
 */
export async function ensureBootstrapAdmin(
  configured: string,
  email: string,
  password?: string,
  keep?: (generatedPassword: string) => Promise<void>,
): Promise<BootstrapResult> {
  // Stored and reported in the form login uses: the name the operator is told is the one that works.
  const username = canonicalUsername(configured);
  if (username === null) throw new Error(`ADMIN_USERNAME ${JSON.stringify(configured)} is not a valid username (letters, digits and . _ @ + ' - only).`);
  if (await wasBootstrapped(username)) return { created: false, username };
  if (await getUser(username)) {
    // Made before the marker existed: marked now, so deleting it later is for good.
    await markBootstrapped(username);
    return { created: false, username };
  }
  if (canonicalEmail(email) === null) throw new Error(`ADMIN_EMAIL ${JSON.stringify(email)} is not a valid email address.`);
  const generatedPassword = password ? undefined : randomBytes(18).toString('base64url');
  if (generatedPassword !== undefined) await keep?.(generatedPassword);
  try {
    await createUser(
      {
        username,
        name: 'Administrator',
        email,
        role: 'superadmin',
        is_active: true,
        password_hash: await hashPassword(password ?? generatedPassword!),
      },
      undefined,
      // Audited like every other way an account appears: "who made this superadmin?" has an answer.
      [
        bootstrappedAction(username),
        auditAction({ actor: username, role: null, action: 'user_create', target: email, detail: { source: 'bootstrap', role: 'superadmin' } }),
      ],
    );
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    if (await getUser(username)) return { created: false, username }; // created concurrently
    // An email names one account: the superadmin is not made under another account's address.
    if (error instanceof EmailTaken) throw new Error(`ADMIN_EMAIL ${email} is another account's email already; choose another address for ${username}.`);
    throw error;
  }
  return { created: true, username, generatedPassword };
}
