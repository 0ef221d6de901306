// Ticket providers: open a ticket for an issue in Jira Cloud or through a
// generic webhook (DESIGN.md §10). The caller (POST /api/issues/{id}/create-ticket)
// claims the issue, maps errors to HTTP statuses and stores the answer.
//
// Configuration: shared/config/tickets.ts (TICKET_PROVIDER and what each
// provider needs; URLs https, plain http only to a loopback host).
//
// No automatic retries: creating a ticket is not idempotent, so retrying after a
// timeout could open a second ticket. The user retries knowingly instead.
// The shapes the providers share live in types.ts, so jira.ts and webhook.ts
// do not import this module back (no import cycle).
import type { Env } from '../config/env.js';
import { ServiceUnavailable } from '../http/errors.js';
import { ticketSettings } from '../config/tickets.js';
import { jiraProvider } from './jira.js';
import type { TicketProvider } from './types.js';
import { webhookProvider } from './webhook.js';

export { TicketProviderError, type CreatedTicket, type TicketProvider, type TicketRequest } from './types.js';

/**
 * The configured provider, or null when TICKET_PROVIDER is unset/empty. Throws ServiceUnavailable (503) with a detail
 * naming the missing variables when TICKET_PROVIDER is set but incomplete, or has an unknown value. `env`: another
 * environment than this process's (tests).
 */
export function ticketProvider(env?: Env): TicketProvider | null {
  const settings = env ? ticketSettings.from(env) : ticketSettings();
  if (!settings) return null;
  if (settings.provider === 'jira') {
    const { baseUrl, projectKey, issueType, userEmail, apiToken, timeoutMs } = settings;
    return jiraProvider({
      baseUrl,
      projectKey,
      issueType,
      email: userEmail,
      apiToken: async () => {
        const token = await apiToken();
        if (!token) throw new ServiceUnavailable('TICKET_API_TOKEN is empty.');
        return token;
      },
      timeoutMs,
    });
  }
  return webhookProvider({ url: settings.url, token: settings.token, timeoutMs: settings.timeoutMs });
}
