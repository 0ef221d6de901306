// The three roles of the spec and the role sets the route table uses (DESIGN §5).
import * as z from '../zod.js';

export const ROLES = ['superadmin', 'admin', 'viewer'] as const;
export const Role = z.enum(ROLES);
export type Role = z.infer<typeof Role>;

// Literal tuples, so each route's declaration keeps its exact set (the console's typecheck compares its own to it).
export const ANY_ROLE = ROLES;
export const ADMIN_UP = ['superadmin', 'admin'] as const satisfies readonly Role[];
export const SUPERADMIN = ['superadmin'] as const satisfies readonly Role[];

/** Whether an account of role `inviter` may invite one of role `invited` (DESIGN §5: only a superadmin grants superadmin). */
export const mayInvite = (inviter: Role, invited: Role): boolean => inviter === 'superadmin' || (inviter === 'admin' && invited !== 'superadmin');
