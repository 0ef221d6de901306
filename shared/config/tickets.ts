// The ticket provider of create-ticket (shared/tickets/): Jira Cloud or a
// generic webhook. Optional: unset, the route answers 503; set but incomplete or
// invalid, it answers 503 naming what to set (never echoing a value).
//
//   TICKET_PROVIDER       'jira' | 'webhook'; unset or empty: no ticket provider.
// Jira Cloud (TICKET_PROVIDER=jira):
//   TICKET_BASE_URL       site URL, e.g. https://acme.atlassian.net (a trailing slash is fine)
//   TICKET_PROJECT_KEY    project the tickets go to, e.g. OPS
//   TICKET_USER_EMAIL     Atlassian account that owns the API token
//   TICKET_API_TOKEN      its API token (secret); on AWS, TICKET_API_TOKEN_ARN names a Secrets Manager secret instead
//   TICKET_ISSUE_TYPE     optional, default Task
// Webhook (TICKET_PROVIDER=webhook):
//   TICKET_WEBHOOK_URL    receives POST {issue_id, summary, description, link, labels, severity} and answers 2xx {key, url}
//   TICKET_WEBHOOK_TOKEN  optional, sent as `Authorization: Bearer …` (secret); or TICKET_WEBHOOK_TOKEN_ARN
// Both:
//   TICKET_TIMEOUT_MS     optional, default 10000, at most 20000: inside the route's 29 s after the secret and the reads (and the 60 s ticket claim of shared/issues/triage.ts);
//                         the call ends sooner when the request arrived 25 s before (TICKET_ANSWER_WITHIN_MS there), and is not made with under 1 s left
// URLs must be https (plain http only to a loopback host): credentials travel in headers.
import { ServiceUnavailable } from '../http/errors.js';
import { serviceUrl } from '../http/service-url.js';
import { defineSettings, text, whole } from './env.js';
import { credential, secretVariables } from './secrets.js';

type Credential = () => Promise<string | undefined>;
export type TicketSettings =
  | { provider: 'jira'; baseUrl: string; projectKey: string; userEmail: string; issueType: string; apiToken: Credential; timeoutMs: number }
  | { provider: 'webhook'; url: string; token: Credential; timeoutMs: number };

export const ticketSettings = defineSettings(
  'tickets',
  () => ({
    TICKET_PROVIDER: text(),
    TICKET_BASE_URL: text(),
    TICKET_PROJECT_KEY: text(),
    TICKET_USER_EMAIL: text(),
    TICKET_ISSUE_TYPE: text(),
    TICKET_WEBHOOK_URL: text(),
    ...secretVariables('TICKET_API_TOKEN'),
    ...secretVariables('TICKET_WEBHOOK_TOKEN'),
    TICKET_TIMEOUT_MS: whole('TICKET_TIMEOUT_MS', 10_000, 1, 20_000, ' of milliseconds'),
  }),
  {
    secrets: ['TICKET_API_TOKEN', 'TICKET_WEBHOOK_TOKEN'],
    failure: (message) => new ServiceUnavailable(message),
    derive: (v): TicketSettings | null => {
      if (!v.TICKET_PROVIDER) return null;
      const incomplete = (provider: string, missing: string[]) => {
        if (missing.length) throw new ServiceUnavailable(`TICKET_PROVIDER is '${provider}' but its configuration is incomplete: set ${missing.join(', ')}.`);
      };
      switch (v.TICKET_PROVIDER.toLowerCase()) {
        case 'jira': {
          const apiToken = credential('TICKET_API_TOKEN', v);
          const missing: string[] = (['TICKET_BASE_URL', 'TICKET_PROJECT_KEY', 'TICKET_USER_EMAIL'] as const).filter((name) => !v[name]);
          if (!apiToken.configured) missing.push('TICKET_API_TOKEN (or TICKET_API_TOKEN_ARN)');
          incomplete('jira', missing);
          // Jira Cloud's Basic auth is the account's email with its token: anything else is refused by every call (401).
          if (!/^[^@\s]+@[^@\s]+$/.test(v.TICKET_USER_EMAIL!))
            throw new ServiceUnavailable('TICKET_USER_EMAIL must be the email address of the Atlassian account that owns the API token.');
          const site = serviceUrl(v.TICKET_BASE_URL!, 'TICKET_BASE_URL', 'allowed');
          return {
            provider: 'jira',
            baseUrl: `${site.origin}${site.pathname.replace(/\/+$/, '')}`,
            projectKey: v.TICKET_PROJECT_KEY!,
            userEmail: v.TICKET_USER_EMAIL!,
            issueType: v.TICKET_ISSUE_TYPE || 'Task',
            apiToken: apiToken.value,
            timeoutMs: v.TICKET_TIMEOUT_MS,
          };
        }
        case 'webhook':
          incomplete('webhook', v.TICKET_WEBHOOK_URL ? [] : ['TICKET_WEBHOOK_URL']);
          return {
            provider: 'webhook',
            url: serviceUrl(v.TICKET_WEBHOOK_URL!, 'TICKET_WEBHOOK_URL', 'allowed').href,
            token: credential('TICKET_WEBHOOK_TOKEN', v).value,
            timeoutMs: v.TICKET_TIMEOUT_MS,
          };
        default:
          throw new ServiceUnavailable(`TICKET_PROVIDER '${v.TICKET_PROVIDER.slice(0, 40)}' is unknown: set it to 'jira' or 'webhook', or leave it unset.`);
      }
    },
  },
);
