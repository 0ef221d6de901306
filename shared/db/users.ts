// Users repository: one item per account, keyed by username (invited users log
// in with their email as username).
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { Role } from '../auth/roles.js';
import { getItem, putItem } from './client.js';

export const UserRecord = z.object({
  pk: z.string(),
  sk: z.literal('USER'),
  id: z.string(),
  username: z.string(),
  name: z.string(),
  email: z.string(),
  role: Role,
  is_active: z.boolean(),
  password_hash: z.string().optional(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type UserRecord = z.infer<typeof UserRecord>;

const userKey = (username: string) => ({ pk: `USER#${username.toLowerCase()}`, sk: 'USER' as const });

export async function getUser(username: string): Promise<UserRecord | undefined> {
  const item = await getItem('users', userKey(username), true);
  return item ? UserRecord.parse(item) : undefined;
}

export interface NewUser {
  username: string;
  name: string;
  email: string;
  role: Role;
  is_active: boolean;
  password_hash?: string;
}

/** Creates the user unless the username is taken (throws ConditionFailed then). */
export async function createUser(user: NewUser, now = new Date()): Promise<UserRecord> {
  const at = now.toISOString();
  const record: UserRecord = { ...userKey(user.username), id: randomUUID(), ...user, username: user.username.toLowerCase(), created_at: at, updated_at: at };
  await putItem('users', record, { ConditionExpression: 'attribute_not_exists(pk)' });
  return record;
}
