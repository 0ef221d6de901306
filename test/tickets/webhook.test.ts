// The generic ticket webhook provider against a local webhook server.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TicketProviderError, ticketProvider, type TicketProvider, type TicketRequest } from '../../shared/tickets/provider.js';
import { startFakeTicketWebhook, type FakeTicketWebhook } from '../support/fake-ticket-webhook.js';

const TOKEN = 'webhook-token-S3CRET-0123456789';

const request: TicketRequest = {
  issue_id: 'iss-456',
  summary: '[Warning] ReplicationLag on prod-db-2 (Acme Corp)',
  description: 'Replica lag above 30 s for 10 minutes.\n\n- 09:10 lag 34 s\n- 09:20 lag 41 s',
  link: 'https://fleet.example.com/issues/iss-456',
  labels: ['fleet-health', 'warning'],
  severity: 'Warning',
};

let hook: FakeTicketWebhook;
let open: FakeTicketWebhook;

beforeAll(async () => {
  hook = await startFakeTicketWebhook({ token: TOKEN });
  open = await startFakeTicketWebhook();
});

afterAll(async () => {
  await hook.close();
  await open.close();
});

beforeEach(() => {
  hook.mode = 'ok';
});

function webhookProvider(overrides: NodeJS.ProcessEnv = {}): TicketProvider {
  const provider = ticketProvider({ TICKET_PROVIDER: 'webhook', TICKET_WEBHOOK_URL: hook.url, TICKET_WEBHOOK_TOKEN: TOKEN, ...overrides });
  expect(provider?.name).toBe('webhook');
  return provider!;
}

/** The TicketProviderError a failing create() throws; its message must never carry the token. */
async function providerError(creating: Promise<unknown>, ...secrets: string[]): Promise<TicketProviderError> {
  const error = await creating.then(
    () => expect.fail('create() should have failed'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TicketProviderError);
  for (const secret of [TOKEN, ...secrets]) expect((error as TicketProviderError).message).not.toContain(secret);
  return error as TicketProviderError;
}

describe('webhook provider', () => {
  it('posts the ticket request with the bearer token and answers the key and URL', async () => {
    const ticket = await webhookProvider().create({ ...request, extra: 'not sent' } as TicketRequest);
    expect(ticket).toEqual({ key: expect.stringMatching(/^HOOK-\d+$/), url: `https://tickets.example.com/browse/${ticket.key}` });
    const sent = hook.received.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: '/hooks/tickets' });
    expect(sent.headers).toMatchObject({ authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json' });
    expect(sent.body).toEqual(request);
  });

  it('sends no Authorization header without a token', async () => {
    const ticket = await webhookProvider({ TICKET_WEBHOOK_URL: open.url, TICKET_WEBHOOK_TOKEN: undefined }).create(request);
    expect(ticket.key).toMatch(/^HOOK-\d+$/);
    expect(open.received.at(-1)!.headers.authorization).toBeUndefined();
  });

  it('says the credentials were refused on 401, without showing them', async () => {
    const wrongToken = 'wrong-token-ABCDEF987654';
    const error = await providerError(webhookProvider({ TICKET_WEBHOOK_TOKEN: wrongToken }).create(request), wrongToken);
    expect(error.message).toBe(
      'The ticket webhook refused the credentials (HTTP 401): check its token (TICKET_WEBHOOK_TOKEN; on AWS the secret TicketCredentialArn names)',
    );
    expect(error.status).toBe(401);
  });

  it('a token HTTP cannot carry (a line break in the setting) is refused before sending: nothing created, and the token not named', async () => {
    const broken = 'line-one\nline-two-S3CRET';
    const before = hook.received.length;
    const error = await providerError(webhookProvider({ TICKET_WEBHOOK_TOKEN: broken }).create(request), broken, 'line-two-S3CRET');
    expect(error.mayExist).toBe(false);
    expect(error.message).toBe('The ticket webhook was not asked: a request header holds characters HTTP cannot carry (check the token setting)');
    expect(hook.received.length).toBe(before);
  });

  it('reports a non-2xx answer with its status', async () => {
    hook.mode = 'error500';
    const error = await providerError(webhookProvider().create(request));
    expect(error.message).toBe('The ticket webhook answered HTTP 500');
    expect(error.status).toBe(500);
    const notFound = await providerError(webhookProvider({ TICKET_WEBHOOK_URL: `${hook.url}/missing` }).create(request));
    expect(notFound.message).toBe('The ticket webhook answered HTTP 404');
  });

  it('says a 429 is a rate limit and when to try again (its Retry-After): nothing was created', async () => {
    hook.mode = 'rateLimited';
    const error = await providerError(webhookProvider().create(request));
    expect(error).toMatchObject({ message: 'The ticket webhook is limiting the rate of requests (HTTP 429): try again in 12 s', status: 429, mayExist: false });
  });

  it('a 303 (the POST did its work, see there) may have made the ticket; another redirect is a wrong URL, where nothing was', async () => {
    hook.mode = 'seeOther';
    const seeOther = await providerError(webhookProvider().create(request));
    expect(seeOther).toMatchObject({ message: 'The ticket webhook answered with a redirect to see the result (HTTP 303)', status: 303, mayExist: true });
    hook.mode = 'moved';
    const moved = await providerError(webhookProvider().create(request));
    expect(moved).toMatchObject({ message: 'The ticket webhook answered with a redirect (HTTP 301): check TICKET_WEBHOOK_URL', status: 301, mayExist: false });
  });

  it('refuses an answer without a usable key and http(s) URL', async () => {
    for (const mode of ['invalid', 'garbage'] as const) {
      hook.mode = mode;
      const error = await providerError(webhookProvider().create(request));
      expect(error.message).toBe('The ticket webhook answered without a ticket key and an http(s) URL');
      expect(error.status).toBe(200);
    }
  });

  it('refuses a key the console would show as another (a control or bidirectional character), or two keys, as PATCH refuses them set by hand', async () => {
    for (const mode of ['spoofing', 'twoKeys'] as const) {
      hook.mode = mode;
      const error = await providerError(webhookProvider().create(request));
      // The receiver answered 201: the ticket may exist, so the user looks for it rather than creating another.
      expect(error, mode).toMatchObject({ message: 'The ticket webhook answered without a ticket key and an http(s) URL', status: 201, mayExist: true });
    }
  });

  it('refuses an answer of more than 1 MB without reading the rest', async () => {
    hook.mode = 'oversized';
    const error = await providerError(webhookProvider().create(request));
    expect(error.message).toBe('The ticket webhook answered with more than 1 MB');
  });

  it('gives up after TICKET_TIMEOUT_MS', async () => {
    hook.mode = 'slow'; // it would answer 201 after 3 s: an error at all means the timeout fired (how soon: npm run bench -- tickets)
    const error = await providerError(webhookProvider({ TICKET_TIMEOUT_MS: '200' }).create(request));
    expect(error.message).toBe('The ticket webhook did not answer: no answer within 0.2 s');
  });

  it("ends the call by the create's deadline when that comes before TICKET_TIMEOUT_MS", async () => {
    hook.mode = 'slow';
    const error = await providerError(webhookProvider({ TICKET_TIMEOUT_MS: '20000' }).create(request, Date.now() + 1_300));
    expect(error.message).toMatch(/^The ticket webhook did not answer: no answer within 1\.[0-3] s$/);
  });
});
