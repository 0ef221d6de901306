// The bootstrap superadmin on AWS: the deploy step (functions/bootstrap.ts) as CloudFormation's
// custom resource runs it through the CDK provider framework, against DynamoDB Local, with the
// password served by a local server speaking the Secrets Manager JSON protocol
// (test/support/fake-secrets-manager.ts). A Create makes the account once; later events leave it as it is;
// the password is in no answer and no log line.
import { vi } from 'vitest';

vi.hoisted(() => {
  // Every line the deploy step writes, to check that none carries the password.
  process.env.LOG_LEVEL = 'debug';
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/bootstrap.js';
import { lambdaContext } from '../../infra/local/functions.js';
import { verifyPassword } from '../../shared/auth/passwords.js';
import { getUser } from '../../shared/db/users.js';
import { useTestTables } from '../support/dynamo.js';
import { type FakeSecretsManager, startFakeSecretsManager } from '../support/fake-secrets-manager.js';
import { captureLogLines } from '../support/log-lines.js';

const SECRET_ARN = 'arn:aws:secretsmanager:local:000000000000:secret:fleet-health-bootstrap-abc';
const EMPTY_SECRET_ARN = 'arn:aws:secretsmanager:local:000000000000:secret:empty-abc';
const PASSWORD = 'Gq7dXv2LmN8pRt4KwZ6bHc3JfY9sUe5A';
/** A secret no login could ever type back in: over login's 1,024 characters. */
const LONG_SECRET_ARN = 'arn:aws:secretsmanager:local:000000000000:secret:long-abc';
const SECRETS: Record<string, string> = { [SECRET_ARN]: PASSWORD, [EMPTY_SECRET_ARN]: '', [LONG_SECRET_ARN]: 'p'.repeat(1025) };
let fake: FakeSecretsManager;

beforeAll(async () => {
  fake = await startFakeSecretsManager(SECRETS);
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = fake.endpoint;
  await useTestTables();
});

afterAll(async () => {
  await fake.close();
  delete process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER;
});

/** An event as the provider framework passes it on from CloudFormation (the response URL replaced). */
function cfnEvent(requestType: 'Create' | 'Update' | 'Delete', properties: Record<string, string>, physicalId?: string) {
  return {
    RequestType: requestType,
    ServiceToken: 'arn:aws:lambda:local:000000000000:function:framework-onEvent',
    ResponseURL: '...',
    StackId: 'arn:aws:cloudformation:local:000000000000:stack/FleetHealth-prod/1',
    RequestId: `request-${requestType}`,
    LogicalResourceId: 'BootstrapSuperadmin',
    ResourceType: 'Custom::BootstrapSuperadmin',
    ...(physicalId ? { PhysicalResourceId: physicalId } : {}),
    ResourceProperties: { ServiceToken: 'arn:aws:lambda:local:000000000000:function:framework-onEvent', ...properties },
  };
}

/** The deploy step as Lambda runs it, with everything it answered and logged. */
async function run(event: unknown) {
  const logs = captureLogLines();
  try {
    const answer = await handler(event, lambdaContext('bootstrap'));
    return { answer, logged: JSON.stringify(logs.stop()) };
  } catch (error) {
    return { error: error as Error, logged: JSON.stringify(logs.stop()) };
  }
}

describe('the bootstrap deploy step', () => {
  const properties = { Username: 'Admin', Email: 'Admin@Example.com', PasswordSecretArn: SECRET_ARN };

  it('creates the superadmin on Create with the password from the secret, and answers and logs no password', async () => {
    const created = await run(cfnEvent('Create', properties));
    expect(created.error).toBeUndefined();
    expect(created.answer).toEqual({ PhysicalResourceId: 'bootstrap-superadmin', Data: { Username: 'admin', Created: 'true' } });
    expect(fake.calls).toEqual([`secretsmanager.GetSecretValue ${SECRET_ARN}`]);
    const user = await getUser('admin');
    expect(user).toMatchObject({ username: 'admin', role: 'superadmin', is_active: true, email: 'admin@example.com' });
    expect(await verifyPassword(PASSWORD, user!.password_hash!)).toBe(true);
    expect(created.logged).toContain('bootstrap superadmin created');
    expect(created.logged).not.toContain(PASSWORD);
    expect(JSON.stringify(created.answer)).not.toContain(PASSWORD);
  });

  it('leaves the account unchanged on a second event (an Update, every later deploy), even with another password in the secret', async () => {
    const before = await getUser('admin');
    SECRETS[SECRET_ARN] = 'another-password-put-later';
    try {
      const again = await run(cfnEvent('Update', properties, 'bootstrap-superadmin'));
      expect(again.answer).toEqual({ PhysicalResourceId: 'bootstrap-superadmin', Data: { Username: 'admin', Created: 'false' } });
      expect(again.logged).toContain('bootstrap superadmin made before (it exists, or was deleted since): left as it is');
    } finally {
      SECRETS[SECRET_ARN] = PASSWORD;
    }
    expect(await getUser('admin')).toEqual(before);
    expect(await verifyPassword(PASSWORD, (await getUser('admin'))!.password_hash!)).toBe(true);
  });

  it('does nothing on Delete: the account stays, as the retained tables do', async () => {
    const before = await getUser('admin');
    const deleted = await run(cfnEvent('Delete', properties, 'bootstrap-superadmin'));
    expect(deleted.answer).toEqual({ PhysicalResourceId: 'bootstrap-superadmin' });
    expect(await getUser('admin')).toEqual(before);
  });

  it('fails the deployment with a reason, and creates nothing, when the secret holds no password or cannot be read', async () => {
    const empty = await run(cfnEvent('Create', { ...properties, Username: 'root', Email: 'root@example.com', PasswordSecretArn: EMPTY_SECRET_ARN }));
    expect(empty.error?.message).toBe("The bootstrap superadmin's password secret holds no password of 8 to 1024 characters: put one in it and deploy again.");
    const long = await run(cfnEvent('Create', { ...properties, Username: 'root', Email: 'root@example.com', PasswordSecretArn: LONG_SECRET_ARN }));
    expect(long.error?.message).toBe(empty.error?.message);
    const missing = await run(cfnEvent('Create', { ...properties, Username: 'root', Email: 'root@example.com', PasswordSecretArn: `${SECRET_ARN}-deleted` }));
    expect(missing.error?.message).toBe(
      "The bootstrap superadmin's password could not be read from Secrets Manager (ResourceNotFoundException); see the bootstrap function's log.",
    );
    expect(await getUser('root')).toBeUndefined();
  });

  it('refuses an event without the properties it needs, naming them', async () => {
    const { error } = await run(cfnEvent('Create', { Username: 'root', Email: 'root@example.com' }));
    expect(error?.message).toMatch(/^The bootstrap resource needs the properties Username, Email and PasswordSecretArn \(a Secrets Manager ARN\): /);
    expect(error?.message).toContain('PasswordSecretArn');
    expect((await run({ hello: 'world' })).error?.message).toBe('Not a CloudFormation custom resource event (RequestType Create, Update or Delete).');
    expect(await getUser('root')).toBeUndefined();
  });
});
