// The bootstrap superadmin on AWS: a custom resource of the stack (infra/fleet-health-stack.ts)
// runs functions/bootstrap.ts on every deployment that creates or updates it, and that creates
// the account once (ensureBootstrapAdmin, as `npm start` does locally; not again once deleted) with the password
// the stack generated into Secrets Manager. The event carries the secret's ARN, never the
// password (CloudFormation shows resource properties, the provider framework logs events); the
// password is read here, hashed, and neither returned nor logged.
import * as z from '../zod.js';
import { secretStringAt } from '../config/secrets.js';
import type { TableAccess } from '../http/route.js';
import type { TableName } from '../db/tables.js';
import { createLogger, errorFields } from '../log.js';
import { ensureBootstrapAdmin } from './bootstrap.js';
import { PASSWORD_MAX, PASSWORD_MIN } from './password-rule.js';

/** The deploy step's Lambda, as a route group or worker declares itself: the stack grants it these tables and sets `core`. */
export const BOOTSTRAP_FUNCTION = {
  name: 'bootstrap',
  /**
   * createUser puts the account and its email item and updates the superadmin counter (users), and appends its audit
   * entry (audit): it never deletes, so the deploy step cannot erase an account.
   */
  tables: { users: 'readputupdate', audit: 'append' } as Partial<Record<TableName, TableAccess>>,
  config: ['core'],
} as const;

/** The properties the stack gives the custom resource (CloudFormation passes every value as a string). */
const Properties = z.looseObject({
  Username: z.string().check(z.minLength(1)),
  Email: z.string().check(z.minLength(1)),
  PasswordSecretArn: z.string().check(z.regex(/^arn:[^:]+:secretsmanager:/)),
});

/** What the provider framework passes on from CloudFormation (the response URL already replaced). */
const BootstrapEvent = z.looseObject({
  RequestType: z.enum(['Create', 'Update', 'Delete']),
  PhysicalResourceId: z.optional(z.string()),
  ResourceProperties: z.unknown(),
});

/** What the framework sends back to CloudFormation: `Data` is readable with Fn::GetAtt, so it holds no secret. */
export interface BootstrapResponse {
  PhysicalResourceId: string;
  Data?: { Username: string; Created: 'true' | 'false' };
}

/** One id for the resource: an Update never replaces it, so CloudFormation never sends the Delete a replacement would. */
const PHYSICAL_ID = 'bootstrap-superadmin';

const log = createLogger('auth/bootstrap-resource');

async function readPassword(secretArn: string): Promise<string> {
  let value: unknown;
  try {
    value = await secretStringAt(secretArn);
  } catch (error) {
    log.error('bootstrap password could not be read', { secret: secretArn, ...errorFields(error) });
    throw new Error(`The bootstrap superadmin's password could not be read from Secrets Manager (${(error as Error).name}); see the bootstrap function's log.`);
  }
  const password = typeof value === 'string' ? value.trim() : '';
  // Activation's rule: a shorter secret is a mistake, not a password; a longer one could never be typed in (login's limit).
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX)
    throw new Error(
      `The bootstrap superadmin's password secret holds no password of ${PASSWORD_MIN} to ${PASSWORD_MAX} characters: put one in it and deploy again.`,
    );
  return password;
}

/**
 * Create and Update: the superadmin is created once, with the secret's password; an existing account is
 * left as it is (its password included), and one deleted since is not made again, so every deployment may run this. Delete: nothing,
 * the account outlives the stack as its retained tables do.
 */
export async function onBootstrapEvent(event: unknown): Promise<BootstrapResponse> {
  const request = BootstrapEvent.safeParse(event);
  if (!request.success) throw new Error('Not a CloudFormation custom resource event (RequestType Create, Update or Delete).');
  if (request.data.RequestType === 'Delete') return { PhysicalResourceId: request.data.PhysicalResourceId ?? PHYSICAL_ID };
  const properties = Properties.safeParse(request.data.ResourceProperties);
  if (!properties.success)
    throw new Error(
      `The bootstrap resource needs the properties Username, Email and PasswordSecretArn (a Secrets Manager ARN): ${z.prettifyError(properties.error)}`,
    );
  const { Username, Email, PasswordSecretArn } = properties.data;
  // Read even when the account exists: a secret that cannot be read fails the deployment that would need it.
  const password = await readPassword(PasswordSecretArn);
  const result = await ensureBootstrapAdmin(Username, Email, password);
  log.info(result.created ? 'bootstrap superadmin created' : 'bootstrap superadmin made before (it exists, or was deleted since): left as it is', {
    username: result.username,
  });
  return { PhysicalResourceId: PHYSICAL_ID, Data: { Username: result.username, Created: result.created ? 'true' : 'false' } };
}
