// Settings every Lambda reads: the stage, CORS, the service name, response
// checking, the table prefix and the log level. The stack sets them on every
// function; locally they default to a development stage.
import * as z from '../zod.js';
import { serviceUrl } from '../http/service-url.js';
import { ConfigError, defineSettings, flag } from './env.js';

/** Stages the Lambda code accepts (the stack's `stage` context must be one of these). */
export const STAGES = ['dev', 'prod'] as const;
export type StageName = (typeof STAGES)[number];

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;

const CORS_MESSAGE =
  'CORS_ORIGINS must be a comma-separated list of origins as browsers send them, such as https://ops.example.com or http://localhost:5173 (http or https, the host in lower case and an optional port; no path, no trailing slash)';

/** The entries of a comma-separated list, trimmed, without blanks. */
const listOf = (raw: string) =>
  raw
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);

/** An origin exactly as a browser's Origin header carries it: the CORS check compares strings, so `https://x/` would never match. */
function isOrigin(entry: string): boolean {
  try {
    const url = new URL(entry);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === entry;
  } catch {
    return false;
  }
}

/** What DynamoDB Local takes as an access key id, long enough that nobody guesses it (npm start's key of its data). */
export const DYNAMODB_LOCAL_KEY = /^[A-Za-z0-9]{16,128}$/;

export const coreSettings = defineSettings(
  'core',
  () => ({
    STAGE: z._default(z.enum(STAGES, { error: `STAGE must be one of ${STAGES.join(', ')}` }), 'dev'),
    // `*` is accepted outside production only, where every origin is allowed anyway (derive refuses it in prod).
    CORS_ORIGINS: z._default(z.string().check(z.refine((raw) => listOf(raw).every((o) => o === '*' || isOrigin(o)), { error: CORS_MESSAGE })), ''),
    SERVICE_NAME: z._default(z.string().check(z.maxLength(64, { error: 'SERVICE_NAME must be at most 64 characters' })), 'fleet-health'),
    // Either case: shared/log.ts hands Powertools the level (its own reading of the variable takes upper case only).
    LOG_LEVEL: z._default(
      z.pipe(z.string().check(z.toLowerCase()), z.enum(LOG_LEVELS, { error: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })),
      'info',
    ),
    VALIDATE_RESPONSES: flag('VALIDATE_RESPONSES', true),
    TABLE_PREFIX: z._default(
      z.string().check(z.regex(/^[A-Za-z0-9_.-]{0,200}$/, { error: 'TABLE_PREFIX may hold letters, digits, _ . - only' })),
      'fleet-health-',
    ),
    // Where the AWS APIs every function calls are (shared/aws/): Lambda sets the region; the
    // endpoint overrides, the SDK's own variables, point them elsewhere (DynamoDB Local, tests).
    AWS_REGION: z.optional(z.string()),
    AWS_DEFAULT_REGION: z.optional(z.string()),
    AWS_ENDPOINT_URL: z.optional(z.string()),
    AWS_ENDPOINT_URL_DYNAMODB: z.optional(z.string()),
    AWS_ENDPOINT_URL_SECRETS_MANAGER: z.optional(z.string()),
    // Set by `npm start`: the DynamoDB endpoint is DynamoDB Local, which takes any signature, so shared/aws/ signs
    // its requests with static credentials and leaves the process's own (Bedrock, SES, Prometheus) to the user.
    DYNAMODB_LOCAL: flag('DYNAMODB_LOCAL', false),
    // The access key id those requests carry. DynamoDB Local has no bind option and answers on every interface;
    // without -sharedDb it keeps one database per key id and region, so `npm start` keeps its data under a key
    // generated for its DATA_DIR, which nobody else on the network can name (infra/local/README.md).
    DYNAMODB_LOCAL_KEY: z.optional(z.string().check(z.regex(DYNAMODB_LOCAL_KEY, { error: 'DYNAMODB_LOCAL_KEY must be 16 to 128 letters and digits' }))),
  }),
  {
    derive: (vars) => {
      // A production allowlist of `*` would quietly open CORS to every site.
      if (vars.STAGE === 'prod' && listOf(vars.CORS_ORIGINS).includes('*'))
        throw new ConfigError('CORS_ORIGINS may not be * when STAGE is prod: list the origins allowed (empty: same-origin only).');
      const dynamoEndpoint = endpoint(vars, 'AWS_ENDPOINT_URL_DYNAMODB');
      if (vars.DYNAMODB_LOCAL && !dynamoEndpoint) throw new ConfigError('DYNAMODB_LOCAL needs AWS_ENDPOINT_URL_DYNAMODB, the endpoint of DynamoDB Local.');
      return {
        stage: vars.STAGE,
        /** Origins allowed by CORS: every origin outside production, the allowlist in production. */
        corsOrigins: vars.STAGE === 'prod' ? listOf(vars.CORS_ORIGINS) : ['*'],
        serviceName: vars.SERVICE_NAME,
        logLevel: vars.LOG_LEVEL,
        /** Answers are checked against their route's schema outside production unless VALIDATE_RESPONSES=false. */
        checkResponses: vars.VALIDATE_RESPONSES && vars.STAGE !== 'prod',
        tablePrefix: vars.TABLE_PREFIX,
        region: vars.AWS_REGION ?? vars.AWS_DEFAULT_REGION,
        /** Each service's endpoint override: its own variable, else the one for every service. */
        dynamoEndpoint,
        /** The DynamoDB endpoint is DynamoDB Local (shared/aws/json-call.ts signs for it with static credentials). */
        dynamoLocal: vars.DYNAMODB_LOCAL,
        /** The key id DynamoDB Local's requests are signed with (`local` unless npm start set one). */
        dynamoLocalKey: vars.DYNAMODB_LOCAL_KEY ?? 'local',
        secretsEndpoint: endpoint(vars, 'AWS_ENDPOINT_URL_SECRETS_MANAGER'),
      };
    },
  },
);

function endpoint(vars: { AWS_ENDPOINT_URL?: string } & Record<string, string | boolean | undefined>, name: string): URL | undefined {
  const value = vars[name] ?? vars.AWS_ENDPOINT_URL;
  if (typeof value !== 'string') return undefined;
  try {
    return serviceUrl(value, vars[name] ? name : 'AWS_ENDPOINT_URL');
  } catch (error) {
    // A setting, refused as every other is (a ConfigError: `npm start` says it in one line), with serviceUrl's words.
    throw new ConfigError((error as Error).message);
  }
}
