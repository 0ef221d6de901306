// A generic ticket webhook: POST the ticket request as JSON, optionally with a
// bearer token; the receiver opens the ticket wherever it likes and answers
// 2xx {key, url}.
import * as z from '../zod.js';
import { mayExistAfter, TicketProviderError, type CreatedTicket, type TicketProvider, type TicketRequest } from './types.js';
import { parseJson } from '../http/outbound.js';
import { HttpLink, TicketKey } from '../routes/common.js';
import { postJson, rateLimited } from './post.js';

export interface WebhookConfig {
  url: string;
  /** Resolved per call (Secrets Manager on AWS); undefined: no Authorization header. */
  token: () => Promise<string | undefined>;
  timeoutMs: number;
}

// Limits match what the issue stores (ticket_key ≤ 64, ticket_url an http(s) URL ≤ 2048). The key is checked as
// PATCH /api/issues/{id} checks one a person sets (TicketKey: one key, no control, bidirectional or invisible
// character), since the console shows it the same: a receiver's "OPS-1\u202E" was stored and shown as another key.
const WebhookTicket = z.object({
  key: TicketKey().check(z.minLength(1)),
  url: HttpLink(),
});

export function webhookProvider(config: WebhookConfig): TicketProvider {
  return {
    name: 'webhook',
    async create(request: TicketRequest, deadline = Number.POSITIVE_INFINITY): Promise<CreatedTicket> {
      const token = await config.token();
      const headers: Record<string, string> = { Accept: 'application/json', 'Content-Type': 'application/json' };
      if (token) headers.Authorization = `Bearer ${token}`;
      // Named fields only: whatever else the caller's object carries stays here.
      const { issue_id, summary, description, link, labels, severity } = request;
      const answer = await postJson(
        'The ticket webhook',
        config.url,
        headers,
        { issue_id, summary, description, link, labels, severity },
        config.timeoutMs,
        deadline,
      );
      if (answer.status === 401 || answer.status === 403) {
        throw new TicketProviderError(
          `The ticket webhook refused the credentials (HTTP ${answer.status}): check its token (TICKET_WEBHOOK_TOKEN; on AWS the secret TicketCredentialArn names)`,
          answer.status,
        );
      }
      if (answer.status === 429) throw rateLimited('The ticket webhook', answer.headers);
      // A 303 (See Other) is how a service says a POST did its work: the ticket may exist. Any other redirect sent it elsewhere.
      if (answer.status === 303) throw new TicketProviderError('The ticket webhook answered with a redirect to see the result (HTTP 303)', 303, true);
      if (answer.status >= 300 && answer.status < 400) {
        throw new TicketProviderError(`The ticket webhook answered with a redirect (HTTP ${answer.status}): check TICKET_WEBHOOK_URL`, answer.status);
      }
      if (answer.status < 200 || answer.status >= 300)
        throw new TicketProviderError(`The ticket webhook answered HTTP ${answer.status}`, answer.status, mayExistAfter(answer.status));
      const ticket = WebhookTicket.safeParse(parseJson(answer.text));
      if (!ticket.success) {
        throw new TicketProviderError('The ticket webhook answered without a ticket key and an http(s) URL', answer.status, true);
      }
      return ticket.data;
    },
  };
}
