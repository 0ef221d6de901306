// A local server speaking Secrets Manager's JSON protocol (GetSecretValue), for the real
// clients: shared/config/secrets.ts and the bootstrap resource. A secret id it does not hold
// (or any id, once `failNext` is set, for one call) is ResourceNotFoundException, as AWS answers;
// any operation but GetSecretValue is UnknownOperationException, so a client calling another is caught.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeSecretsManager {
  /** For AWS_ENDPOINT_URL_SECRETS_MANAGER. */
  endpoint: string;
  /** Every request as `<X-Amz-Target> <SecretId>`, in arrival order. */
  calls: string[];
  /** The next request is refused as not found, whatever it asks. */
  failNext: boolean;
  close(): Promise<void>;
}

/** A secret's versions by staging label (AWSCURRENT, AWSPREVIOUS): its string and when it was made (epoch seconds). */
export type SecretVersions = Record<string, { value: string; created: number }>;

/**
 * `secrets`: SecretId → SecretString (an empty string is a secret that holds nothing; its one version, AWSCURRENT,
 * made at 1.7e9), or its versions by stage. A stage the secret has no version under is ResourceNotFoundException,
 * as AWS answers.
 */
export async function startFakeSecretsManager(secrets: Record<string, string | SecretVersions>): Promise<FakeSecretsManager> {
  const fake: FakeSecretsManager = { endpoint: '', calls: [], failNext: false, close: async () => undefined };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { SecretId, VersionStage = 'AWSCURRENT' } = JSON.parse(body) as { SecretId: string; VersionStage?: string };
      const target = req.headers['x-amz-target'];
      fake.calls.push(`${target} ${SecretId}${VersionStage === 'AWSCURRENT' ? '' : ` ${VersionStage}`}`);
      if (target !== 'secretsmanager.GetSecretValue') {
        res.writeHead(400, { 'Content-Type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify({ __type: 'UnknownOperationException', message: `${String(target)} is not an operation this fake serves.` }));
        return;
      }
      const held = secrets[SecretId];
      const versions: SecretVersions | undefined = typeof held === 'string' ? { AWSCURRENT: { value: held, created: 1.7e9 } } : held;
      const version = versions?.[VersionStage];
      if (fake.failNext || !version) {
        fake.failNext = false;
        res.writeHead(400, { 'Content-Type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify({ __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." }));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.1' });
      res.end(
        JSON.stringify({
          ARN: SecretId,
          Name: SecretId.split(':').pop(),
          SecretString: version.value,
          VersionId: `v-${VersionStage}`,
          VersionStages: [VersionStage],
          CreatedDate: version.created,
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  fake.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((r) => server.close(() => r()));
  return fake;
}
