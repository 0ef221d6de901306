// The stack's settings: CDK context values (`cdk synth -c key=value`, or cdk.json),
// read and checked here, before any construct exists. The stack and the
// configuration bindings (infra/config-bindings.ts) read them.
import type { StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { canonicalEmail, canonicalUsername } from '../shared/auth/username.js';
import { STAGES, type StageName } from '../shared/config/core.js';

export interface FleetHealthStackProps extends StackProps {
  readonly stage: StageName;
  /** Comma-separated CORS allowlist for the prod stage (empty: same-origin through CloudFront only). */
  readonly corsOrigins: string;
  /** SES identity (name or ARN) the invitation mail is sent from; undefined: any identity of this account/region. */
  readonly sesIdentity?: string;
  /** Sender address for invitation mail (SES_FROM_ADDRESS); undefined: no mail, activation token in the response. */
  readonly sesFromAddress?: string;
  /** Overrides the patrol's declared timetable (shared/workers.ts) with an EventBridge expression, e.g. `cron(0 6 * * ? *)`. */
  readonly patrolSchedule?: string;
  /** Base URL of the SPA for links in mail (APP_URL); undefined: the CloudFront URL. */
  readonly appUrl?: string;
  /** Optional LDAP login for the auth group: LDAP_URL, LDAP_USER_DN_TEMPLATE, LDAP_ROLE_MAP; the stack adds the LDAP_CA_CERT_ARN secret. */
  readonly ldap?: { url: string; userDnTemplate: string; roleMap?: string; startTls?: string };
  /** Optional ticket provider of create-ticket (shared/tickets/provider.ts); undefined: 503 there. */
  readonly tickets?: TicketSettings;
  /**
   * Optional BI server for dashboard embedding (shared/embed/provider.ts): EMBED_HOST and EMBED_CLIENT_ID, and the
   * dashboard the console shows (EMBED_DASHBOARD, a path on the host); the secret is created by the stack.
   */
  readonly embed?: { host: string; clientId: string; dashboard?: string };
  /** Optional LLM provider (shared/llm/provider.ts) of every function granted bedrock:invoke; undefined: chat 503, patrol/agents run the rules engine. */
  readonly llm?: LlmSettings;
  /** ARN of the Amazon Managed Service for Prometheus workspace the metrics puller queries (auth: sigv4); undefined: any of this account and region. */
  readonly prometheusWorkspaceArn?: string;
  /**
   * The version of the origin token secret CloudFront sends (infra/config-bindings.ts, originVerifySecret): CloudFormation
   * resolves the secret only when the template changes, so a rotation (put-secret-value) reaches CloudFront with a deploy
   * that names the new version. Undefined: the current version as of the deploy that created the distribution.
   */
  readonly originVerifyVersionId?: string;
  /** Email address subscribed to the alarm topic (infra/constructs/monitoring.ts); undefined: no subscription, subscribe by hand. */
  readonly alarmEmail?: string;
  /**
   * The bootstrap superadmin the deployment creates when absent (shared/auth/bootstrap-resource.ts), as
   * ADMIN_USERNAME and ADMIN_EMAIL are locally: its username (canonical form) and email.
   */
  readonly admin: { username: string; email: string };
  /**
   * Any other plain variable a function's configuration concern reads (`EMBED_MODELS`, `LLM_PRICING`,
   * `ALERT_CLUSTER_LABEL`, timeouts…), set on the functions that declare that concern and checked by its
   * schema at synth (infra/config-bindings.ts). Context `settings`: an object in cdk.json, or its JSON with `-c`.
   */
  readonly settings: Readonly<Record<string, string>>;
}

export interface LlmSettings {
  provider: 'bedrock' | 'openai';
  model: string;
  /** openai: the server (LLM_BASE_URL); its key goes in a secret the stack creates. */
  baseUrl?: string;
}

export interface TicketSettings {
  provider: 'jira' | 'webhook';
  /** Jira: TICKET_BASE_URL, TICKET_PROJECT_KEY, TICKET_USER_EMAIL, optional TICKET_ISSUE_TYPE. */
  baseUrl?: string;
  projectKey?: string;
  userEmail?: string;
  issueType?: string;
  /** Webhook: TICKET_WEBHOOK_URL. */
  webhookUrl?: string;
}

/** Reads the stack settings from CDK context (`cdk synth -c stage=dev`, or cdk.json). */
export function fleetHealthPropsFromContext(scope: Construct): FleetHealthStackProps {
  const stage = String(scope.node.tryGetContext('stage') ?? 'prod');
  if (!(STAGES as readonly string[]).includes(stage)) {
    throw new Error(`context stage=${stage}: must be one of ${STAGES.join(', ')} (shared/config/core.ts accepts only these)`);
  }
  // cdk.json writes switches and numbers as JSON (`"ldapStartTls": true`): read as their text, so the concern's
  // schema judges them as it judges `-c ldapStartTls=true`. Anything else is refused, not dropped.
  const optional = (key: string): string | undefined => {
    const value: unknown = scope.node.tryGetContext(key);
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return String(value);
    if (typeof value !== 'string') throw new Error(`context ${key}: a text, a number or true/false, not ${JSON.stringify(value)}`);
    return value.trim() !== '' ? value.trim() : undefined;
  };
  return {
    stage: stage as StageName,
    corsOrigins: optional('corsOrigins') ?? '',
    sesIdentity: optional('sesIdentity'),
    sesFromAddress: optional('sesFromAddress'),
    patrolSchedule: optional('patrolSchedule'),
    appUrl: optional('appUrl'),
    prometheusWorkspaceArn: optional('prometheusWorkspaceArn'),
    originVerifyVersionId: versionId('originVerifyVersionId'),
    alarmEmail: email('alarmEmail'),
    admin: bootstrapAdmin(optional('adminUsername') ?? 'admin', optional('adminEmail') ?? 'admin@fleet-health.local'),
    // Half given is refused, as the other integrations' settings are: dropping it silently left login without LDAP.
    ldap:
      // StartTLS written off (`false`) asks for no LDAP; any other value of it does, and needs the rest.
      optional('ldapUrl') || optional('ldapUserDnTemplate') || optional('ldapRoleMap') || (optional('ldapStartTls') ?? 'false') !== 'false'
        ? {
            url: required('ldapUrl', 'an LDAP setting'),
            userDnTemplate: required('ldapUserDnTemplate', 'an LDAP setting'),
            roleMap: optional('ldapRoleMap'),
            // As given: the ldap concern's schema reads it at synth as the Lambda will (true/1/on/yes), or refuses it.
            startTls: optional('ldapStartTls'),
          }
        : undefined,
    tickets: ticketSettings(optional),
    llm: llmSettings(optional),
    settings: settingsOf(scope.node.tryGetContext('settings')),
    embed:
      optional('embedHost') || optional('embedClientId') || optional('embedDashboard')
        ? { host: required('embedHost', 'an embed setting'), clientId: required('embedClientId', 'embedHost'), dashboard: optional('embedDashboard') }
        : undefined,
  };

  /** A Secrets Manager version id (a UUID as put-secret-value answers it). */
  function versionId(key: string): string | undefined {
    const value = optional(key);
    if (value !== undefined && !/^[A-Za-z0-9-]{32,64}$/.test(value)) throw new Error(`context ${key}=${value}: not a Secrets Manager version id`);
    return value;
  }

  function email(key: string): string | undefined {
    const value = optional(key);
    if (value !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value)) throw new Error(`context ${key}=${value}: not an email address`);
    return value;
  }

  function required(key: string, because: string): string {
    const value = optional(key);
    if (!value) throw new Error(`context ${because} also needs ${key}`);
    return value;
  }
}

/** The bootstrap superadmin in the forms login and the settings routes take; refused at synth when there are none. */
function bootstrapAdmin(username: string, email: string): FleetHealthStackProps['admin'] {
  const canonical = { username: canonicalUsername(username), email: canonicalEmail(email) };
  if (canonical.username === null) throw new Error(`context adminUsername=${username}: not a username (letters, digits and . _ @ + ' - only)`);
  if (canonical.email === null) throw new Error(`context adminEmail=${email}: not an email address`);
  return { username: canonical.username, email: canonical.email };
}

function llmSettings(optional: (key: string) => string | undefined): LlmSettings | undefined {
  const provider = optional('llmProvider');
  if (!provider) return undefined;
  if (provider !== 'bedrock' && provider !== 'openai') throw new Error(`context llmProvider=${provider}: must be bedrock or openai`);
  const model = optional('llmModel');
  if (!model) throw new Error(`context llmProvider=${provider} also needs llmModel`);
  const baseUrl = optional('llmBaseUrl');
  if (provider === 'openai' && !baseUrl) throw new Error('context llmProvider=openai also needs llmBaseUrl');
  return { provider, model, baseUrl };
}

function ticketSettings(optional: (key: string) => string | undefined): TicketSettings | undefined {
  const provider = optional('ticketProvider');
  if (!provider) return undefined;
  if (provider !== 'jira' && provider !== 'webhook') throw new Error(`context ticketProvider=${provider}: must be jira or webhook`);
  const settings: TicketSettings = {
    provider,
    baseUrl: optional('ticketBaseUrl'),
    projectKey: optional('ticketProjectKey'),
    userEmail: optional('ticketUserEmail'),
    issueType: optional('ticketIssueType'),
    webhookUrl: optional('ticketWebhookUrl'),
  };
  const needed = provider === 'jira' ? (['baseUrl', 'projectKey', 'userEmail'] as const) : (['webhookUrl'] as const);
  const missing = needed.filter((k) => !settings[k]);
  if (missing.length)
    throw new Error(`context ticketProvider=${provider} also needs ${missing.map((k) => `ticket${k[0]!.toUpperCase()}${k.slice(1)}`).join(', ')}`);
  return settings;
}

/** Context `settings` as variables: an object of strings, numbers or booleans (cdk.json), or that object's JSON (`-c settings='{…}'`). */
export function settingsOf(value: unknown): Record<string, string> {
  if (value === undefined || value === null || value === '') return {};
  let object = value;
  if (typeof value === 'string') {
    try {
      object = JSON.parse(value);
    } catch {
      throw new Error('context settings: not JSON; give an object of variables, e.g. -c settings=\'{"EMBED_MODELS":"thelook"}\'');
    }
  }
  if (object === null || typeof object !== 'object' || Array.isArray(object)) throw new Error('context settings: must be an object of variables');
  const settings: Record<string, string> = {};
  for (const [name, v] of Object.entries(object)) {
    if (!/^[A-Z][A-Z0-9_]*$/.test(name)) throw new Error(`context settings: ${JSON.stringify(name)} is not a variable name`);
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      throw new Error(`context settings.${name}: must be a string, number or boolean (a JSON value such as LLM_PRICING's goes in as its text)`);
    }
    settings[name] = String(v);
  }
  return settings;
}
