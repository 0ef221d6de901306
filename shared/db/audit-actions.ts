// The audit log's actions, apart from its repository so the route table can name
// them in the audit answer's schema without loading the DynamoDB client.
export const AUDIT_ACTIONS = [
  'login',
  'login_failed',
  'logout',
  'invite',
  'user_create',
  'activate',
  'password_change',
  'password_reset',
  'password_set',
  'user_update',
  'user_delete',
  'rules_update',
  'change_propose',
  'change_approve',
  'change_reject',
  'change_withdraw',
  'settings_update',
  'issue_update',
  'ticket_create',
  'patrol_trigger',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
