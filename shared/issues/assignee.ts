// The assignee of an alert or AI issue, resolved one way for both PATCH routes,
// and the lists' `assignee` filter, resolved the same way for both lists.
import { getUser, listUsers } from '../db/users.js';
import { ValidationFailed } from '../http/errors.js';
import type { Principal } from '../auth/principal.js';
import { UNASSIGNED } from '../routes/common.js';

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

/** The usernames of the active accounts: those an issue may be assigned to (resolveAssignee), and whose issues count as assigned. */
export async function activeUsernames(): Promise<Set<string>> {
  return new Set((await listUsers()).filter((u) => u.is_active).map((u) => u.username));
}

/** Whether a list shows an issue with this stored assignee. */
export type AssigneeMatch = (assignee: string) => boolean;

/**
 * A list's `assignee` filter (shared/routes/common.ts AssigneeFilter, validated) for this caller: `me` is the
 * caller's username, as a PATCH stores it; UNASSIGNED the issues the KPIs count unassigned (no assignee, or
 * one no active account has), so the list under it holds as many as the tile says; else that username.
 * Undefined: anyone's.
 */
export async function assigneeMatch(filter: string, principal: Pick<Principal, 'username'>): Promise<AssigneeMatch | undefined> {
  if (!filter) return undefined;
  if (filter === UNASSIGNED) {
    const active = await activeUsernames();
    return (assignee) => !assignee || !active.has(assignee);
  }
  const username = filter === 'me' ? principal.username : filter;
  return (assignee) => assignee === username;
}
