// Secrets a Lambda needs at run time: the value itself from an environment
// variable (local runs), or the Secrets Manager secret its `_ARN` twin names
// (AWS), fetched once per container. A failed fetch is retried on the next
// call, not cached.
const cache = new Map<string, Promise<string | undefined>>();

async function load(variable: string): Promise<string | undefined> {
  const direct = process.env[variable];
  if (direct) return direct;
  const arn = process.env[`${variable}_ARN`];
  if (!arn) return undefined;
  // Imported lazily: only Lambdas on AWS pay for the Secrets Manager client.
  const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  const out = await new SecretsManagerClient({}).send(new GetSecretValueCommand({ SecretId: arn }));
  return out.SecretString;
}

/** The secret named by `variable` (or `${variable}_ARN`); undefined when neither is set. */
export function secret(
  variable: 'JWT_SECRET' | 'INGEST_TOKEN' | 'TICKET_API_TOKEN' | 'TICKET_WEBHOOK_TOKEN' | 'LLM_API_KEY' | 'EMBED_CLIENT_SECRET' | 'LDAP_CA_CERT',
): Promise<string | undefined> {
  let value = cache.get(variable);
  if (!value) {
    value = load(variable).catch((error: unknown) => {
      cache.delete(variable);
      throw error;
    });
    cache.set(variable, value);
  }
  return value;
}

/** For tests that change the environment. */
export function forgetSecrets(): void {
  cache.clear();
}
