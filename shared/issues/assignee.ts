// The assignee of an alert or AI issue, resolved one way for both PATCH routes.
import { getUser, listUsers } from '../db/users.js';
import { ValidationFailed } from '../http/errors.js';
import type { Principal } from '../auth/principal.js';

/**
 * The assignee a PATCH stores, for alert and AI issues alike: the username of
 * an active account named by username, email or display name (one only: a name
 * two active accounts share is refused, naming their usernames); `me` is the
 * caller; empty unassigns.
 */
export async function resolveAssignee(principal: Principal, assignee: string): Promise<string> {
  const wanted = assignee.trim();
  if (!wanted) return '';
  if (wanted.toLowerCase() === 'me') return principal.username;
  let user = await getUser(wanted);
  if (!user) {
    // By email, else by display name among the active accounts: two people may share a name, and then it names nobody.
    const users = await listUsers();
    const active = users.filter((u) => u.is_active);
    const named = active.filter((u) => u.name === wanted);
    user = users.find((u) => u.email.toLowerCase() === wanted.toLowerCase()) ?? (named.length === 1 ? named[0] : undefined);
    if (!user && named.length > 1) {
      throw new ValidationFailed(`${named.length} active users are named ${wanted}: assign by username (${named.map((u) => u.username).join(', ')}).`, [
        { loc: ['body', 'assignee'], msg: 'names several active users: give the username', type: 'value_error' },
      ]);
    }
  }
  if (!user?.is_active)
    throw new ValidationFailed(`No user ${wanted} to assign.`, [
      { loc: ['body', 'assignee'], msg: 'must be an active user, "me" or empty', type: 'value_error' },
    ]);
  return user.username;
}
