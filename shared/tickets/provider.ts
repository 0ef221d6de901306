// Ticket providers: open a ticket for an issue in Jira Cloud or through a
// generic webhook (DESIGN.md §10). The caller (POST /api/issues/{id}/create-ticket)
// claims the issue, maps errors to HTTP statuses and stores the answer.
//
// Configuration (environment):
//   TICKET_PROVIDER       'jira' | 'webhook'; unset or empty: no ticket provider.
// Jira Cloud (TICKET_PROVIDER=jira):
//   TICKET_BASE_URL       site URL, e.g. https://acme.atlassian.net (a trailing slash is fine)
//   TICKET_PROJECT_KEY    project the tickets go to, e.g. OPS
//   TICKET_USER_EMAIL     Atlassian account that owns the API token
//   TICKET_API_TOKEN      its API token; on AWS, TICKET_API_TOKEN_ARN names a Secrets Manager secret instead
//   TICKET_ISSUE_TYPE     optional, default Task
// Webhook (TICKET_PROVIDER=webhook):
//   TICKET_WEBHOOK_URL    receives POST {issue_id, summary, description, link, labels, severity}
//                         and answers 2xx {key, url}
//   TICKET_WEBHOOK_TOKEN  optional, sent as `Authorization: Bearer …`; or TICKET_WEBHOOK_TOKEN_ARN
// Both:
//   TICKET_TIMEOUT_MS     optional, default 10000, at most 30000: how long one call may take
//
// URLs must be https (plain http only to a loopback host, for local fakes):
// credentials travel in the request headers.
//
// No automatic retries: creating a ticket is not idempotent, so retrying after a
// timeout could open a second ticket. The user retries knowingly instead.
// The shapes the providers share live in types.ts, so jira.ts and webhook.ts
// do not import this module back (no import cycle).
import { secret } from '../auth/secrets.js';
import { ServiceUnavailable } from '../http/errors.js';
import { serviceUrl } from '../http/service-url.js';
import { jiraProvider } from './jira.js';
import type { TicketProvider } from './types.js';
import { webhookProvider } from './webhook.js';

export { TicketProviderError, type CreatedTicket, type TicketProvider, type TicketRequest } from './types.js';

const DEFAULT_TIMEOUT_MS = 10_000;

/** The configured provider, or null when TICKET_PROVIDER is unset/empty. Throws ServiceUnavailable (503) with a detail naming the missing variables when TICKET_PROVIDER is set but incomplete, or has an unknown value. */
export function ticketProvider(env: NodeJS.ProcessEnv = process.env): TicketProvider | null {
  const kind = text(env, 'TICKET_PROVIDER');
  if (!kind) return null;
  switch (kind.toLowerCase()) {
    case 'jira':
      return jiraFromEnv(env);
    case 'webhook':
      return webhookFromEnv(env);
    default:
      throw new ServiceUnavailable(`TICKET_PROVIDER '${kind.slice(0, 40)}' is unknown: set it to 'jira' or 'webhook', or leave it unset.`);
  }
}

function jiraFromEnv(env: NodeJS.ProcessEnv): TicketProvider {
  const missing = ['TICKET_BASE_URL', 'TICKET_PROJECT_KEY', 'TICKET_USER_EMAIL'].filter((name) => !text(env, name));
  if (!hasSecret(env, 'TICKET_API_TOKEN')) missing.push('TICKET_API_TOKEN (or TICKET_API_TOKEN_ARN)');
  failIfMissing('jira', missing);
  const site = serviceUrl(text(env, 'TICKET_BASE_URL'), 'TICKET_BASE_URL', 'allowed');
  return jiraProvider({
    baseUrl: `${site.origin}${site.pathname.replace(/\/+$/, '')}`,
    projectKey: text(env, 'TICKET_PROJECT_KEY'),
    issueType: text(env, 'TICKET_ISSUE_TYPE') || 'Task',
    email: text(env, 'TICKET_USER_EMAIL'),
    apiToken: async () => {
      const token = await secretValue(env, 'TICKET_API_TOKEN');
      if (!token) throw new ServiceUnavailable('TICKET_API_TOKEN is empty: check the secret TICKET_API_TOKEN_ARN names.');
      return token;
    },
    timeoutMs: timeoutMs(env),
  });
}

function webhookFromEnv(env: NodeJS.ProcessEnv): TicketProvider {
  failIfMissing('webhook', text(env, 'TICKET_WEBHOOK_URL') ? [] : ['TICKET_WEBHOOK_URL']);
  return webhookProvider({
    url: serviceUrl(text(env, 'TICKET_WEBHOOK_URL'), 'TICKET_WEBHOOK_URL', 'allowed').href,
    token: () => secretValue(env, 'TICKET_WEBHOOK_TOKEN'),
    timeoutMs: timeoutMs(env),
  });
}

function text(env: NodeJS.ProcessEnv, name: string): string {
  return env[name]?.trim() ?? '';
}

function hasSecret(env: NodeJS.ProcessEnv, name: string): boolean {
  return Boolean(text(env, name) || text(env, `${name}_ARN`));
}

/**
 * The plain variable from `env` (local runs, tests); otherwise secret() fetches
 * the Secrets Manager secret the `_ARN` twin names (it reads process.env and
 * caches per container). Resolved per call, so a missing secret fails the
 * ticket, not the configuration check.
 */
async function secretValue(env: NodeJS.ProcessEnv, name: 'TICKET_API_TOKEN' | 'TICKET_WEBHOOK_TOKEN'): Promise<string | undefined> {
  const value = text(env, name) || (text(env, `${name}_ARN`) ? (await secret(name))?.trim() : undefined);
  return value || undefined;
}

function failIfMissing(provider: string, missing: string[]): void {
  if (missing.length === 0) return;
  throw new ServiceUnavailable(`TICKET_PROVIDER is '${provider}' but its configuration is incomplete: set ${missing.join(', ')}.`);
}

const MAX_TIMEOUT_MS = 30_000;

function timeoutMs(env: NodeJS.ProcessEnv): number {
  const raw = text(env, 'TICKET_TIMEOUT_MS');
  if (!raw) return DEFAULT_TIMEOUT_MS;
  const ms = Number(raw);
  // At most 30 s: well inside the 60 s ticket claim (shared/issues/triage.ts), so a slow call cannot outlive its claim.
  if (!Number.isInteger(ms) || ms <= 0 || ms > MAX_TIMEOUT_MS)
    throw new ServiceUnavailable(`TICKET_TIMEOUT_MS must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}.`);
  return ms;
}
