// The three roles of the spec and the role sets the route table uses (DESIGN §5).
import * as z from '../zod.js';

export const ROLES = ['superadmin', 'admin', 'viewer'] as const;
export const Role = z.enum(ROLES);
export type Role = z.infer<typeof Role>;

export const ANY_ROLE: readonly Role[] = ROLES;
export const ADMIN_UP: readonly Role[] = ['superadmin', 'admin'];
export const SUPERADMIN: readonly Role[] = ['superadmin'];
