// Ticket providers against local servers that answer only after 3 s (the fakes
// of test/support): how soon create-ticket gives up after TICKET_TIMEOUT_MS.
// test/tickets/ checks that it does (the error it answers), not how soon.
import { TicketProviderError, ticketProvider, type TicketRequest } from '../../shared/tickets/provider.js';
import { startFakeJira } from '../support/fake-jira.js';
import { startFakeTicketWebhook } from '../support/fake-ticket-webhook.js';
import type { BenchContext } from './run.js';

export const title = 'Ticket providers: the timeout against a server that does not answer';

const RUNS = 5;
const EMAIL = 'bench@example.com';
const TOKEN = 'bench-token-0123456789';
const request: TicketRequest = {
  issue_id: 'iss-bench',
  summary: '[Critical] DiskUsageHigh on prod-db-1 (Acme Corp)',
  description: 'DiskUsageHigh fired 3 times on prod-db-1 in the last hour.',
  link: 'https://fleet.example.com/issues/iss-bench',
  labels: ['fleet-health', 'critical'],
  severity: 'Critical',
};

const median = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;

export async function run({ report }: BenchContext): Promise<void> {
  const jira = await startFakeJira({ projectKey: 'OPS', email: EMAIL, apiToken: TOKEN });
  const hook = await startFakeTicketWebhook({ token: TOKEN });
  jira.mode = 'slow';
  hook.mode = 'slow';
  try {
    const providers = [
      [
        'Jira',
        ticketProvider({
          TICKET_PROVIDER: 'jira',
          TICKET_BASE_URL: jira.baseUrl,
          TICKET_PROJECT_KEY: 'OPS',
          TICKET_USER_EMAIL: EMAIL,
          TICKET_API_TOKEN: TOKEN,
          TICKET_TIMEOUT_MS: '200',
        })!,
      ],
      ['webhook', ticketProvider({ TICKET_PROVIDER: 'webhook', TICKET_WEBHOOK_URL: hook.url, TICKET_WEBHOOK_TOKEN: TOKEN, TICKET_TIMEOUT_MS: '200' })!],
    ] as const;
    for (const [name, provider] of providers) {
      const ms: number[] = [];
      for (let i = 0; i <= RUNS; i++) {
        const started = performance.now();
        const error = await provider.create(request).then(
          () => undefined,
          (e: unknown) => e,
        );
        if (!(error instanceof TicketProviderError) || !/no answer within 0\.2 s/.test(error.message))
          throw new Error(`${name}: expected the timeout, got ${String(error)}`);
        if (i > 0) ms.push(performance.now() - started); // the first is a warm-up
      }
      report(
        'tickets',
        `${name}: timeout error, TICKET_TIMEOUT_MS=200 (ideal 200 ms), median / max of ${RUNS}`,
        `${median(ms).toFixed(0)} / ${Math.max(...ms).toFixed(0)} ms`,
      );
    }
  } finally {
    await jira.close();
    await hook.close();
  }
}
