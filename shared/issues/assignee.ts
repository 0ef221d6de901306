// The assignee of an alert or AI issue, resolved one way for both PATCH routes.
import { getUser, listUsers } from '../db/users.js';
import { ValidationFailed } from '../http/errors.js';
import type { Principal } from '../auth/principal.js';

/**
 * The assignee a PATCH stores, for alert and AI issues alike: the username of
 * an active account named by username, email or display name; `me` is the
 * caller; empty unassigns.
 */
export async function resolveAssignee(principal: Principal, assignee: string): Promise<string> {
  const wanted = assignee.trim();
  if (!wanted) return '';
  if (wanted.toLowerCase() === 'me') return principal.username;
  const user = (await getUser(wanted)) ?? (await listUsers()).find((u) => u.email.toLowerCase() === wanted.toLowerCase() || u.name === wanted);
  if (!user?.is_active)
    throw new ValidationFailed(`No user ${wanted} to assign.`, [
      { loc: ['body', 'assignee'], msg: 'must be an active user, "me" or empty', type: 'value_error' },
    ]);
  return user.username;
}
