// What `npm start` and `npm run invoke` set up before any handler runs (applyLocalEnvironment),
// against the tests' DynamoDB Local: the caller's own AWS credentials and region are left as
// they are, since Bedrock, SES and SigV4 Prometheus sign with them, and DynamoDB Local still
// answers, also when the caller has no AWS credentials or region at all; and a setting that
// would fail every request later stops the start now.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { localClient } from '../../infra/local/dynamodb-local.js';
import { applyLocalEnvironment, startLocalService } from '../../infra/local/service.js';
import { ensureTables } from '../../infra/local/tables.js';
import { getCluster } from '../../shared/db/clusters.js';
import { storedCluster } from '../support/clusters.js';

const AWS_VARIABLES = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_PROFILE',
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_CONFIG_FILE',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_EC2_METADATA_DISABLED',
  'JWT_SECRET',
  'INGEST_TOKEN',
  'SCRAPE_TOKEN',
];
const dynamoEndpoint = inject('dynamoEndpoint');
const tablePrefix = `t${randomBytes(4).toString('hex')}-`;
let dataDir: string;
let saved: Record<string, string | undefined>;

/** As `npm start` on this data folder and the tests' DynamoDB Local. */
const applyLocal = () => applyLocalEnvironment({ dataDir, dynamoEndpoint, tablePrefix });

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'fleet-local-env-'));
  const client = localClient(dynamoEndpoint);
  await ensureTables(client, tablePrefix);
  client.destroy();
});

beforeEach(() => {
  saved = Object.fromEntries(AWS_VARIABLES.map((name) => [name, process.env[name]]));
  for (const name of AWS_VARIABLES) delete process.env[name];
  // No credentials anywhere the SDK's chain looks: no profile files, no instance metadata.
  Object.assign(process.env, {
    AWS_CONFIG_FILE: join(dataDir, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dataDir, 'no-aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
  });
});

afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('the local environment', () => {
  it("keeps the caller's AWS credentials and region, and DynamoDB Local still answers", async () => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDCALLERKEY', AWS_SECRET_ACCESS_KEY: 'caller-secret', AWS_REGION: 'eu-central-1' });
    await applyLocal();
    expect([process.env.AWS_ACCESS_KEY_ID, process.env.AWS_SECRET_ACCESS_KEY, process.env.AWS_REGION]).toEqual([
      'AKIDCALLERKEY',
      'caller-secret',
      'eu-central-1',
    ]);
    const id = await storedCluster();
    expect((await getCluster(id))?.cluster_id).toBe(id);
  });

  it('reaches DynamoDB Local when the caller has no AWS credentials or region at all, and sets none', async () => {
    await applyLocal();
    expect([process.env.AWS_ACCESS_KEY_ID, process.env.AWS_SECRET_ACCESS_KEY, process.env.AWS_REGION]).toEqual([undefined, undefined, undefined]);
    const id = await storedCluster();
    expect((await getCluster(id))?.cluster_id).toBe(id);
  });

  it('refuses an INGEST_TOKEN or SCRAPE_TOKEN shorter than 32 characters before serving, naming it (anyone could guess it)', async () => {
    process.env.INGEST_TOKEN = 'test';
    await expect(applyLocal()).rejects.toThrow('INGEST_TOKEN must be at least 32 characters.');
    process.env.INGEST_TOKEN = 'x'.repeat(32);
    process.env.SCRAPE_TOKEN = 'prometheus';
    await expect(applyLocal()).rejects.toThrow('SCRAPE_TOKEN must be at least 32 characters.');
    process.env.SCRAPE_TOKEN = 'y'.repeat(32);
    await expect(applyLocal()).resolves.toBeUndefined();
  });

  it('refuses a JWT_SECRET shorter than 32 bytes before serving, naming it (every login would answer 503)', async () => {
    process.env.JWT_SECRET = 'short';
    await expect(applyLocal()).rejects.toThrow('JWT_SECRET must be at least 32 bytes.');
    process.env.JWT_SECRET = 'x'.repeat(32);
    await expect(applyLocal()).resolves.toBeUndefined();
  });

  it('npm start refuses a bad setting before DynamoDB Local starts: no emulator run, no database made under DATA_DIR', async () => {
    process.env.JWT_SECRET = 'short';
    const folder = join(await mkdtemp(join(tmpdir(), 'fleet-local-early-')), 'data');
    await expect(startLocalService({ port: 0, dataDir: folder })).rejects.toThrow('JWT_SECRET must be at least 32 bytes.');
    expect(existsSync(join(folder, 'dynamodb'))).toBe(false);
    expect(existsSync(join(folder, 'dynamodb-local.pid'))).toBe(false);
  });

  describe("the key of the folder's database", () => {
    const folder = async () => mkdtemp(join(tmpdir(), 'fleet-local-key-'));
    const apply = (dir: string) => applyLocalEnvironment({ dataDir: dir, dynamoEndpoint, tablePrefix });

    it("is the folder's own, whatever the environment says: one given there opened an empty database beside the data", async () => {
      const dir = await folder();
      process.env.DYNAMODB_LOCAL_KEY = 'GivenInTheShell0123456789';
      await apply(dir);
      const key = readFileSync(join(dir, 'dynamodb-local-key'), 'utf8').trim();
      expect(key).toMatch(/^[0-9a-f]{48}$/);
      expect(statSync(join(dir, 'dynamodb-local-key')).mode & 0o777).toBe(0o600);
      expect(process.env.DYNAMODB_LOCAL_KEY).toBe(key);
      // A CLI on the same folder (npm run invoke) opens the same data.
      process.env.DYNAMODB_LOCAL_KEY = 'AnotherShellKey0123456789';
      await apply(dir);
      expect(process.env.DYNAMODB_LOCAL_KEY).toBe(key);
    });

    it("is told by the database's name when its file went missing; several databases, or a bad file, stop the start naming the file", async () => {
      const dir = await folder();
      await mkdir(join(dir, 'dynamodb'));
      const kept = 'KeptDatabaseKey0123456789';
      await writeFile(join(dir, 'dynamodb', `${kept}_local.db`), '');
      await writeFile(join(dir, 'dynamodb', 'stranger_local.db'), ''); // a name too short to be a key: a stranger's request
      await apply(dir);
      expect(readFileSync(join(dir, 'dynamodb-local-key'), 'utf8').trim()).toBe(kept);

      await rm(join(dir, 'dynamodb-local-key'));
      await writeFile(join(dir, 'dynamodb', 'SecondDatabaseKey012345_local.db'), '');
      await expect(apply(dir)).rejects.toThrow(`${join(dir, 'dynamodb-local-key')} is missing and ${join(dir, 'dynamodb')} holds 2 databases`);

      await writeFile(join(dir, 'dynamodb-local-key'), 'not-a-key\n');
      await expect(apply(dir)).rejects.toThrow(`${join(dir, 'dynamodb-local-key')} must hold 16 to 128 letters and digits`);
    });
  });
});
