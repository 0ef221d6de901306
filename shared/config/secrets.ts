// Secrets a Lambda needs at run time: the value itself from an environment
// variable (local runs, tests), or the Secrets Manager secret its `_ARN` twin
// names (AWS: the stack sets only the ARN, and grants only the functions whose
// declarations name the concern). Read again in the background once a minute
// (SECRET_MAX_AGE_MS), so a rotated secret (a leaked INGEST_TOKEN put anew) stops working
// within a minute or so in warm containers too; a failed first fetch is a 503
// (ServiceUnavailable) and retried on the next call, not cached; a failed re-read keeps the
// value read before (an outage of Secrets Manager fails no request) and is tried again a
// minute later.
import * as z from '../zod.js';
import { awsJsonCall, type AwsJsonService } from '../aws/json-call.js';
import { ServiceUnavailable } from '../http/errors.js';
import { coreSettings } from './core.js';
import { onSettingsReset, processEnv } from './env.js';
import { createLogger, errorFields } from '../log.js';

/** Every secret of the service, by the variable that holds it locally. */
export const SECRET_NAMES = [
  'JWT_SECRET',
  'INGEST_TOKEN',
  'SCRAPE_TOKEN',
  'PROMETHEUS_CREDENTIAL',
  'TICKET_API_TOKEN',
  'TICKET_WEBHOOK_TOKEN',
  'LLM_API_KEY',
  'EMBED_CLIENT_SECRET',
  'LDAP_CA_CERT',
  'ORIGIN_VERIFY_TOKEN',
] as const;
export type SecretName = (typeof SECRET_NAMES)[number];

/** How long one read of a secret may take: well inside a route's 29 s, and a healthy read takes milliseconds. */
const SECRET_TIMEOUT_MS = 5_000;
/** A secret that could not be read is a passing refusal: the 503 asks for another try after this many seconds. */
const SECRET_RETRY_SECONDS = 5;

/** Secrets Manager through the signed JSON call of shared/aws/. */
const SECRETS_MANAGER: AwsJsonService = {
  signingName: 'secretsmanager',
  targetPrefix: 'secretsmanager',
  jsonVersion: '1.1',
  endpoint: () => coreSettings().secretsEndpoint,
};

/** How long a secret's value is used before it is read again. */
export const SECRET_MAX_AGE_MS = 60_000;

const cache = new Map<SecretName, { value: Promise<string | undefined>; readAt: number; refreshing?: boolean }>();
onSettingsReset(() => cache.clear());

/**
 * The string the secret `arn` holds (also the bootstrap resource's password), through the same signed call as DynamoDB (shared/aws/): every route
 * group reads the JWT key on its first request, and the SDK's Secrets Manager client cost each cold start
 * its load. A binary secret (SecretBinary) has no SecretString: undefined, which callers refuse.
 */
export async function secretStringAt(arn: string, signal?: AbortSignal): Promise<string | undefined> {
  return (await secretVersionAt(arn, 'AWSCURRENT', signal)).value;
}

/** The version of the secret `arn` a stage labels (AWSCURRENT, AWSPREVIOUS): its string, and when it was made (epoch ms). */
export async function secretVersionAt(arn: string, stage: string, signal?: AbortSignal): Promise<{ value?: string; createdAt?: number }> {
  const out = await awsJsonCall<{ SecretString?: unknown; CreatedDate?: unknown }>(
    SECRETS_MANAGER,
    'GetSecretValue',
    { SecretId: arn, VersionStage: stage },
    {
      signal,
      // A secret holds at most 64 KB.
      maxAnswerBytes: 1 << 20,
    },
  );
  return {
    value: typeof out.SecretString === 'string' ? out.SecretString : undefined,
    // Seconds, as Secrets Manager's JSON protocol writes a timestamp.
    createdAt: typeof out.CreatedDate === 'number' && Number.isFinite(out.CreatedDate) ? out.CreatedDate * 1000 : undefined,
  };
}

async function load(name: SecretName): Promise<string | undefined> {
  const env = processEnv();
  const direct = env[name];
  if (direct) return direct;
  const arn = env[`${name}_ARN`];
  if (!arn) return undefined;
  try {
    return await secretStringAt(arn, AbortSignal.timeout(SECRET_TIMEOUT_MS));
  } catch (error) {
    // Throttled, denied, deleted, undecryptable or unreachable: the cause goes to the log (it names the
    // account and the key); the caller answers 503 naming only the variable, and the next call tries again.
    createLogger('config/secrets').error('secret could not be read', { secret: `${name}_ARN`, ...errorFields(error) });
    throw new ServiceUnavailable(`${name} could not be read from Secrets Manager; try again shortly.`, SECRET_RETRY_SECONDS);
  }
}

/**
 * A concern's credential as its settings carry it: the value read with the
 * concern's variables (local runs, tests), else the Secrets Manager secret the
 * `_ARN` twin names, fetched on first use (an empty secret is a 503 saying so).
 * `configured` says whether either is set.
 */
export function credential(name: SecretName, vars: Readonly<Record<string, unknown>>): { configured: boolean; value: () => Promise<string | undefined> } {
  const direct = typeof vars[name] === 'string' ? (vars[name] as string).trim() : '';
  const arn = typeof vars[`${name}_ARN`] === 'string' ? (vars[`${name}_ARN`] as string).trim() : '';
  return {
    configured: Boolean(direct || arn),
    value: async () => {
      if (direct || !arn) return direct || undefined;
      const fetched = (await secret(name))?.trim();
      if (!fetched) throw new ServiceUnavailable(`${name} is empty: check the secret ${name}_ARN names.`);
      return fetched;
    },
  };
}

/**
 * The least length of a static bearer token (INGEST_TOKEN, SCRAPE_TOKEN): what the stack generates. A
 * shorter one (`INGEST_TOKEN=test`) would let anyone who guesses it write the fleet or read it.
 */
export const STATIC_TOKEN_MIN_CHARS = 32;

/** A static bearer token's message when it is shorter than STATIC_TOKEN_MIN_CHARS. */
export const shortStaticToken = (name: SecretName) => `${name} must be at least ${STATIC_TOKEN_MIN_CHARS} characters`;

/** A static bearer token's variable (local runs), checked for length so a short one stops `npm start`. */
export const staticTokenVariable = (name: SecretName) =>
  z.optional(z.string().check(z.refine((value) => value.length >= STATIC_TOKEN_MIN_CHARS, { error: shortStaticToken(name) })));

/** The variables a concern declares for a secret: its value (local) and its `_ARN` twin (AWS). */
export const secretVariables = <N extends SecretName>(name: N) =>
  ({ [name]: z.optional(z.string()), [`${name}_ARN`]: z.optional(z.string()) }) as Record<N | `${N}_ARN`, z.ZodMiniOptional<z.ZodMiniString>>;

/**
 * The secret `name` (or the one `${name}_ARN` names); undefined when neither is set. Once the value held is a
 * minute old it is read again in the background: this request, and those until the read ends, use the value held
 * (a slow or failing Secrets Manager delays none of them).
 */
export function secret(name: SecretName): Promise<string | undefined> {
  const held = cache.get(name);
  if (!held) return readAgain(name);
  if (!held.refreshing && Date.now() - held.readAt >= SECRET_MAX_AGE_MS) {
    held.refreshing = true;
    load(name).then(
      (value) => cache.get(name) === held && cache.set(name, { value: Promise.resolve(value), readAt: Date.now() }),
      // Logged by load(); the value held stays, and is tried again a minute from now.
      () => cache.get(name) === held && cache.set(name, { value: held.value, readAt: Date.now() }),
    );
  }
  return held.value;
}

/** The secret as read at most `maxAgeMs` ago, waiting for a read when the value held is older (a static token that did not match). */
export function freshSecret(name: SecretName, maxAgeMs: number): Promise<string | undefined> {
  const held = cache.get(name);
  return held && Date.now() - held.readAt < maxAgeMs ? held.value : readAgain(name);
}

/** Reads the secret now; a failure keeps the value held before, if any, and is a 503 only when there was none. */
function readAgain(name: SecretName): Promise<string | undefined> {
  const previous = cache.get(name)?.value.catch(() => undefined);
  const value = load(name).catch(async (error: unknown) => {
    const kept = await previous;
    if (kept !== undefined) return kept;
    if (cache.get(name)?.value === value) cache.delete(name);
    throw error;
  });
  cache.set(name, { value, readAt: Date.now() });
  return value;
}

/** For tests that change the environment (resetSettings() also forgets them). */
export function forgetSecrets(): void {
  cache.clear();
}
