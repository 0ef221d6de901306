// How the stack provides each configuration concern (shared/config/concerns.ts)
// to the functions that declare it: the variables it sets from the stack's
// settings (CDK context), and the secret it creates and grants. The stack loops
// over every function's declared concerns and applies these; no function is
// named here. Concerns not listed (agents, patrol, llm-pricing) keep their
// documented defaults on AWS; `worker-functions` is set by the invoke grants.
// Each binding's variables are checked by the concern's own schema as the stack
// binds them, so a context value the Lambda would refuse fails the synth.
// Context `settings` adds any other plain variable of a concern (EMBED_MODELS,
// LLM_PRICING, ALERT_CLUSTER_LABEL, timeouts) to the functions declaring it: without
// it those kept their defaults on AWS, and an environment edited by hand is replaced
// at the next deploy. Secrets and what the stack sets itself are refused there.
import { Token } from 'aws-cdk-lib';
import type { SecretName } from '../shared/config/secrets.js';
import { CONCERNS, type ConfigConcern } from '../shared/config/concerns.js';
import type { FleetHealthStackProps } from './stack-props.js';

/** A secret the stack creates for a concern; the functions declaring the concern read it and get `${variable}_ARN`. */
export interface SecretBinding {
  readonly id: string;
  /** The variable holding the value locally; the stack sets `${variable}_ARN` (both named in shared/config/secrets.ts). */
  readonly variable: SecretName;
  readonly description: string;
  /** Why the secret is not rotated automatically (cdk-nag AwsSolutions-SMG4). */
  readonly noRotation: string;
  /** A stack output naming the secret, for the operator to put the value in. */
  readonly output: { id: string; description: string };
  /** Length of the generated value (a placeholder for secrets the operator replaces); 32 unless said. */
  readonly length?: number;
}

export interface ConcernBinding {
  readonly environment?: Record<string, string | undefined>;
  readonly secret?: SecretBinding;
}

/** What the stack knows when it binds configuration: its props and the console's URL. */
export interface BindingContext {
  readonly props: FleetHealthStackProps;
  readonly stage: string;
  readonly siteUrl: string;
  readonly prefix: string;
}

const putAfterDeploy = (what: string, issuer: string) =>
  `The ${what} is issued by ${issuer}, which AWS cannot rotate; operators rotate it there and put the new value.`;

/**
 * The token CloudFront sends to the API as the X-Origin-Verify origin header (CloudFormation resolves the
 * secret into the distribution at deploy time): the route groups that audit trust the X-Viewer-Address
 * CloudFront's function sets only with it (shared/auth/caller.ts).
 */
export const originVerifySecret = (stage: string): SecretBinding => ({
  id: 'OriginVerifyToken',
  variable: 'ORIGIN_VERIFY_TOKEN',
  length: 48,
  description: `Token Fleet Health (${stage}) CloudFront sends to the API with each request, vouching for its viewer address`,
  noRotation:
    'CloudFront sends the token as an origin header that CloudFormation resolves from the secret only when the template ' +
    'changes: a rotation is put-secret-value, then a deploy naming the new version (context originVerifyVersionId).',
  output: { id: 'OriginVerifyTokenArn', description: 'Token CloudFront sends to the API (origin header X-Origin-Verify)' },
});

type Bind = (context: BindingContext) => ConcernBinding | undefined;

const BINDINGS: { readonly [C in ConfigConcern]?: Bind } = {
  core: ({ props, prefix }) => ({
    environment: { STAGE: props.stage, TABLE_PREFIX: prefix, CORS_ORIGINS: props.corsOrigins, SERVICE_NAME: 'fleet-health', LOG_LEVEL: 'info' },
  }),
  tokens: ({ stage }) => ({
    secret: {
      id: 'JwtSecret',
      variable: 'JWT_SECRET',
      length: 64,
      description: `HS256 signing key of Fleet Health (${stage}) access tokens`,
      noRotation:
        'The HS256 signing key is not rotated automatically: every rotation invalidates all issued tokens and logs every ' +
        'user out, and the service keeps no previous key to verify with. Operators rotate it by hand (put-secret-value, ' +
        'then let the containers recycle), accepting the forced re-login.',
      output: { id: 'JwtSecretArn', description: 'Signing key of access tokens (rotate by hand)' },
    },
  }),
  edge: ({ stage }) => ({ secret: originVerifySecret(stage) }),
  ingest: ({ stage }) => ({
    secret: {
      id: 'IngestToken',
      variable: 'INGEST_TOKEN',
      length: 48,
      description: `Bearer token for Fleet Health (${stage}) ingest routes`,
      noRotation:
        'The ingest token is shared with the senders (Alertmanager, metric shippers); rotating it means reconfiguring them, ' +
        'so operators rotate it by hand with the senders (put-secret-value), not on a schedule.',
      output: { id: 'IngestTokenArn', description: 'Secret holding the ingest bearer token' },
    },
  }),
  scrape: ({ stage }) => ({
    secret: {
      id: 'ScrapeToken',
      variable: 'SCRAPE_TOKEN',
      length: 48,
      description: `Bearer token a Prometheus server presents to scrape Fleet Health (${stage}) GET /api/metrics`,
      noRotation:
        'The scrape token is configured in the Prometheus servers that scrape the service; rotating it means reconfiguring ' +
        'them, so operators rotate it by hand with them (put-secret-value), not on a schedule.',
      output: { id: 'ScrapeTokenArn', description: 'Secret holding the metrics scrape bearer token' },
    },
  }),
  prometheus: ({ stage }) => ({
    secret: {
      id: 'PrometheusCredential',
      variable: 'PROMETHEUS_CREDENTIAL',
      description: `Fleet Health (${stage}) credential of the Prometheus query API the metrics puller reads (bearer token or basic password, as the metric-sources rule set says): put the real value after deploy`,
      noRotation: putAfterDeploy('credential', 'the Prometheus server (or the proxy in front of it)'),
      output: { id: 'PrometheusCredentialArn', description: 'Put the Prometheus query API credential here (unused with auth none or sigv4)' },
    },
  }),
  links: ({ props, siteUrl }) => ({ environment: { APP_URL: props.appUrl ?? siteUrl } }),
  mail: ({ props }) => ({ environment: { SES_FROM_ADDRESS: props.sesFromAddress } }),
  // The private CA that signed the directory's certificate: created with a placeholder, which the Lambda
  // ignores (public CAs apply) until the operator puts a PEM there.
  ldap: ({ props: { ldap }, stage }) =>
    ldap && {
      environment: {
        LDAP_URL: ldap.url,
        LDAP_USER_DN_TEMPLATE: ldap.userDnTemplate,
        LDAP_ROLE_MAP: ldap.roleMap,
        LDAP_STARTTLS: ldap.startTls,
      },
      secret: {
        id: 'LdapCaCert',
        variable: 'LDAP_CA_CERT',
        description: `Fleet Health (${stage}) CA certificate (PEM) of the LDAP server, for a private CA: put it after deploy, or leave the placeholder to trust the public CAs`,
        noRotation:
          "A CA certificate is public material issued by the directory's CA, not a credential AWS could rotate; operators put the new certificate when the CA changes.",
        output: { id: 'LdapCaCertArn', description: "Put the LDAP server's private CA certificate (PEM) here" },
      },
    },
  tickets: ({ props: { tickets }, stage }) =>
    tickets && {
      environment: {
        TICKET_PROVIDER: tickets.provider,
        TICKET_BASE_URL: tickets.baseUrl,
        TICKET_PROJECT_KEY: tickets.projectKey,
        TICKET_USER_EMAIL: tickets.userEmail,
        TICKET_ISSUE_TYPE: tickets.issueType,
        TICKET_WEBHOOK_URL: tickets.webhookUrl,
      },
      secret: {
        id: 'TicketCredential',
        variable: tickets.provider === 'jira' ? 'TICKET_API_TOKEN' : 'TICKET_WEBHOOK_TOKEN',
        description: `Fleet Health (${stage}) ${tickets.provider === 'jira' ? 'Jira API token' : 'ticket webhook bearer token'}: put the real value after deploy`,
        noRotation: putAfterDeploy('token', 'the ticket system (Jira or the webhook owner)'),
        output: { id: 'TicketCredentialArn', description: 'Put the ticket provider credential here' },
      },
    },
  llm: ({ props: { llm }, stage }) =>
    llm && {
      environment: { LLM_PROVIDER: llm.provider, LLM_MODEL: llm.model, LLM_BASE_URL: llm.baseUrl },
      secret:
        llm.provider === 'openai'
          ? {
              id: 'LlmApiKey',
              variable: 'LLM_API_KEY',
              description: `Fleet Health (${stage}) API key of the OpenAI-compatible LLM server: put the real value after deploy`,
              noRotation: putAfterDeploy('key', 'the LLM provider'),
              output: { id: 'LlmApiKeyArn', description: 'Put the LLM API key here' },
            }
          : undefined,
    },
  embed: ({ props: { embed }, stage }) =>
    embed && {
      environment: { EMBED_HOST: embed.host, EMBED_CLIENT_ID: embed.clientId, EMBED_DASHBOARD: embed.dashboard },
      secret: {
        id: 'EmbedClientSecret',
        variable: 'EMBED_CLIENT_SECRET',
        description: `Fleet Health (${stage}) client secret of the BI server's embed API: put the real value after deploy`,
        noRotation: putAfterDeploy('client secret', 'the BI server'),
        output: { id: 'EmbedClientSecretArn', description: 'Put the BI server client secret here' },
      },
    },
};

/** The context key each variable set from context comes from (stack-props.ts), to name the one refused. */
const CONTEXT_KEYS: Readonly<Record<string, string>> = {
  STAGE: 'stage',
  CORS_ORIGINS: 'corsOrigins',
  APP_URL: 'appUrl',
  SES_FROM_ADDRESS: 'sesFromAddress',
  LDAP_URL: 'ldapUrl',
  LDAP_USER_DN_TEMPLATE: 'ldapUserDnTemplate',
  LDAP_ROLE_MAP: 'ldapRoleMap',
  LDAP_STARTTLS: 'ldapStartTls',
  TICKET_PROVIDER: 'ticketProvider',
  TICKET_BASE_URL: 'ticketBaseUrl',
  TICKET_PROJECT_KEY: 'ticketProjectKey',
  TICKET_USER_EMAIL: 'ticketUserEmail',
  TICKET_ISSUE_TYPE: 'ticketIssueType',
  TICKET_WEBHOOK_URL: 'ticketWebhookUrl',
  LLM_PROVIDER: 'llmProvider',
  LLM_MODEL: 'llmModel',
  LLM_BASE_URL: 'llmBaseUrl',
  EMBED_HOST: 'embedHost',
  EMBED_CLIENT_ID: 'embedClientId',
  EMBED_DASHBOARD: 'embedDashboard',
};

/** Variables the stack sets itself (from their own context keys, or from what it builds): not in context `settings`. */
const STACK_SET: ReadonlySet<string> = new Set([...Object.keys(CONTEXT_KEYS), 'TABLE_PREFIX', 'SERVICE_NAME', ...CONCERNS['worker-functions'].variables]);

/** Context `settings` grouped by the concerns that read each variable; refuses secrets, the stack's own and unknown names. */
export function settingsByConcern(settings: Readonly<Record<string, string>>): Partial<Record<ConfigConcern, Record<string, string>>> {
  const byConcern: Partial<Record<ConfigConcern, Record<string, string>>> = {};
  const concerns = Object.entries(CONCERNS) as [ConfigConcern, (typeof CONCERNS)[ConfigConcern]][];
  for (const [name, value] of Object.entries(settings)) {
    if (concerns.some(([, c]) => c.secrets.some((secret) => name === secret || name === `${secret}_ARN`))) {
      throw new Error(`context settings.${name}: a secret, which the stack creates in Secrets Manager: put its value there (the outputs name it)`);
    }
    if (STACK_SET.has(name)) throw new Error(`context settings.${name}: set by the stack${CONTEXT_KEYS[name] ? ` (context ${CONTEXT_KEYS[name]})` : ''}`);
    // The local and test runtimes' own (README: "local/tests"): on a Lambda they would send DynamoDB, Secrets Manager
    // or Bedrock calls to another endpoint (the signing key read from it), or name another region than the function's.
    if (name.startsWith('AWS_') || name.startsWith('DYNAMODB_LOCAL'))
      throw new Error(`context settings.${name}: the local runtime's and the tests' own, not a Lambda's`);
    const readers = concerns.filter(([, c]) => c.variables.includes(name)).map(([concern]) => concern);
    if (!readers.length) throw new Error(`context settings.${name}: no function of the service reads it (README's variable table lists them)`);
    for (const concern of readers) byConcern[concern] = { ...byConcern[concern], [name]: value };
  }
  return byConcern;
}

/**
 * The binding, its variables first validated by the concern's schema (shared/config/) as the
 * function will read them: on AWS no start-up check runs, so a value the Lambda would refuse
 * on a request, after it may have changed something, fails the synth instead, naming its
 * context key (`context sesFromAddress: SES_FROM_ADDRESS must be an email address.`).
 */
function checked(concern: ConfigConcern, binding: ConcernBinding | undefined, settings: Readonly<Record<string, string>> = {}): ConcernBinding | undefined {
  if (Object.keys(settings).length) binding = { ...binding, environment: { ...binding?.environment, ...settings } };
  if (!binding) return binding;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(binding.environment ?? {})) {
    // A value known only at deploy time (the CloudFront URL) is the stack's own, not context: left out.
    if (value !== undefined && !Token.isUnresolved(value)) env[name] = value;
  }
  // The secret's value is read at run time; that its ARN is set is what the concern checks.
  if (binding.secret) env[`${binding.secret.variable}_ARN`] = 'arn:aws:secretsmanager:checked-at-synth';
  try {
    CONCERNS[concern].from(env);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const keyOf = (name: string) => CONTEXT_KEYS[name] ?? (name in settings ? `settings.${name}` : undefined);
    const fromContext = Object.keys(env).filter(keyOf);
    const named = fromContext.filter((name) => message.includes(name));
    throw new Error(`context ${(named.length ? named : fromContext).map(keyOf).join(', ')}: ${message}`);
  }
  return binding;
}

/** Every concern's binding, with its context `settings`, checked as it is applied (the stack's bindConfig calls one per function and concern). */
export const CONFIG_BINDINGS: { readonly [C in ConfigConcern]?: Bind } = Object.fromEntries(
  (Object.keys(CONCERNS) as ConfigConcern[]).map((concern) => [
    concern,
    (context: BindingContext) => checked(concern, BINDINGS[concern]?.(context), settingsByConcern(context.props.settings)[concern]),
  ]),
);
