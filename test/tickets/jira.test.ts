// The Jira Cloud ticket provider against a local server speaking Jira's REST v3
// create-issue protocol, and the ticket configuration (TICKET_* variables).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { forgetSecrets } from '../../shared/config/secrets.js';
import { ServiceUnavailable } from '../../shared/http/errors.js';
import { TicketProviderError, ticketProvider, type TicketProvider, type TicketRequest } from '../../shared/tickets/provider.js';
import { startFakeJira, type FakeJira } from '../support/fake-jira.js';

const EMAIL = 'fleet-bot@acme.example';
const TOKEN = 'jira-api-token-S3CRET-0123456789';
const BASIC = `Basic ${Buffer.from(`${EMAIL}:${TOKEN}`).toString('base64')}`;

const request: TicketRequest = {
  issue_id: 'iss-123',
  summary: '[Critical] DiskUsageHigh on prod-db-1 (Acme Corp)',
  description: [
    'DiskUsageHigh fired 3 times on prod-db-1 in the last hour.',
    'Recent alerts:\n- 10:02 disk 91%\n- 10:31 disk 95%',
    'Check the WAL archive\nand the retention job.',
  ].join('\n\n'),
  link: 'https://fleet.example.com/issues/iss-123',
  labels: ['fleet-health', 'critical', 'Acme Corp'],
  severity: 'Critical',
};

let jira: FakeJira;

beforeAll(async () => {
  jira = await startFakeJira({ projectKey: 'OPS', email: EMAIL, apiToken: TOKEN });
});

afterAll(async () => {
  await jira.close();
});

beforeEach(() => {
  jira.mode = 'ok';
});

function jiraEnv(overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    TICKET_PROVIDER: 'jira',
    TICKET_BASE_URL: jira.baseUrl,
    TICKET_PROJECT_KEY: 'OPS',
    TICKET_USER_EMAIL: EMAIL,
    TICKET_API_TOKEN: TOKEN,
    ...overrides,
  };
}

function jiraProvider(overrides: NodeJS.ProcessEnv = {}): TicketProvider {
  const provider = ticketProvider(jiraEnv(overrides));
  expect(provider?.name).toBe('jira');
  return provider!;
}

/** The TicketProviderError a failing create() throws; its message must never carry the credentials. */
async function providerError(creating: Promise<unknown>, ...secrets: string[]): Promise<TicketProviderError> {
  const error = await creating.then(
    () => expect.fail('create() should have failed'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TicketProviderError);
  const { message } = error as TicketProviderError;
  for (const secret of [TOKEN, BASIC.slice('Basic '.length), ...secrets]) expect(message).not.toContain(secret);
  return error as TicketProviderError;
}

describe('Jira provider', () => {
  it('creates the issue with Basic auth and an ADF description, and answers the browse URL', async () => {
    const ticket = await jiraProvider().create(request);
    const sent = jira.received.at(-1)!;
    expect(ticket).toEqual({ key: expect.stringMatching(/^OPS-\d+$/), url: `${jira.baseUrl}/browse/${ticket.key}` });
    expect(sent).toMatchObject({ method: 'POST', path: '/rest/api/3/issue' });
    expect(sent.headers).toMatchObject({ authorization: BASIC, accept: 'application/json', 'content-type': 'application/json' });
    expect(sent.body).toEqual({
      fields: {
        project: { key: 'OPS' },
        summary: '[Critical] DiskUsageHigh on prod-db-1 (Acme Corp)',
        issuetype: { name: 'Task' },
        labels: ['fleet-health', 'critical', 'Acme-Corp'],
        description: {
          type: 'doc',
          version: 1,
          content: [
            { type: 'paragraph', content: [{ type: 'text', text: 'DiskUsageHigh fired 3 times on prod-db-1 in the last hour.' }] },
            { type: 'paragraph', content: [{ type: 'text', text: 'Recent alerts:' }] },
            {
              type: 'bulletList',
              content: [
                { type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: '10:02 disk 91%' }] }] },
                { type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: '10:31 disk 95%' }] }] },
              ],
            },
            {
              type: 'paragraph',
              content: [{ type: 'text', text: 'Check the WAL archive' }, { type: 'hardBreak' }, { type: 'text', text: 'and the retention job.' }],
            },
            {
              type: 'paragraph',
              content: [
                { type: 'text', text: 'Open in Fleet Health: ' },
                { type: 'text', text: request.link, marks: [{ type: 'link', attrs: { href: request.link } }] },
              ],
            },
          ],
        },
      },
    });
  });

  it('numbers issues one after the other, tolerates a trailing slash and uses TICKET_ISSUE_TYPE', async () => {
    const provider = jiraProvider({ TICKET_BASE_URL: `${jira.baseUrl}/`, TICKET_ISSUE_TYPE: 'Bug' });
    const first = await provider.create(request);
    const second = await provider.create(request);
    expect(Number(second.key.split('-')[1])).toBe(Number(first.key.split('-')[1]) + 1);
    expect(second.url).toBe(`${jira.baseUrl}/browse/${second.key}`);
    expect(jira.received.at(-1)).toMatchObject({ path: '/rest/api/3/issue', body: { fields: { issuetype: { name: 'Bug' } } } });
  });

  it("keeps the summary on one line within Jira's 255 characters", async () => {
    await jiraProvider().create({ ...request, summary: `[Warning] ${'x'.repeat(300)}\nsecond line` });
    const summary = (jira.received.at(-1)!.body as { fields: { summary: string } }).fields.summary;
    expect(summary).toHaveLength(255);
    expect(summary).toMatch(/^\[Warning\] x+…$/);
  });

  it('passes on the field errors of a 400', async () => {
    const error = await providerError(jiraProvider().create({ ...request, summary: '  ' }));
    expect(error.message).toBe('Jira refused the ticket: summary: You must specify a summary of the issue.');
    expect(error.status).toBe(400);
    const wrongProject = await providerError(jiraProvider({ TICKET_PROJECT_KEY: 'NOPE' }).create(request));
    expect(wrongProject.message).toBe('Jira refused the ticket: project: Specify a valid project ID or key');
  });

  it('says the credentials were refused on 401, without showing them', async () => {
    const wrongToken = 'wrong-token-ABCDEF987654';
    const error = await providerError(jiraProvider({ TICKET_API_TOKEN: wrongToken }).create(request), wrongToken);
    // What to check, named: on AWS the usual cause is the secret's placeholder never replaced.
    expect(error.message).toBe(
      'Jira refused the credentials (HTTP 401): check TICKET_USER_EMAIL and its API token (TICKET_API_TOKEN; on AWS the secret TicketCredentialArn names)',
    );
    expect(error.status).toBe(401);
    expect(error.mayExist).toBe(false);
    expect(jira.received.at(-1)!.headers.authorization).toBe(`Basic ${Buffer.from(`${EMAIL}:${wrongToken}`).toString('base64')}`);
  });

  it('reports a 500 with its status: the ticket may exist', async () => {
    jira.mode = 'error500';
    const error = await providerError(jiraProvider().create(request));
    expect(error.message).toBe('Jira answered HTTP 500');
    expect(error.status).toBe(500);
    expect(error.mayExist).toBe(true);
  });

  it("says a 429 is Jira's rate limit, when to try again (its Retry-After), and that nothing was created", async () => {
    jira.mode = 'rateLimited';
    const made = jira.created.length;
    try {
      jira.retryAfter = '37';
      const error = await providerError(jiraProvider().create(request));
      expect(error).toMatchObject({ message: 'Jira is limiting the rate of requests (HTTP 429): try again in 37 s', status: 429, mayExist: false });
      jira.retryAfter = undefined;
      const bare = await providerError(jiraProvider().create(request));
      expect(bare).toMatchObject({ message: 'Jira is limiting the rate of requests (HTTP 429): try again in a minute', status: 429, mayExist: false });
      expect(jira.created.length).toBe(made);
    } finally {
      jira.retryAfter = undefined;
    }
  });

  it('reports a redirect (not followed) as a wrong TICKET_BASE_URL, where nothing was created', async () => {
    jira.mode = 'redirect';
    const made = jira.created.length;
    const error = await providerError(jiraProvider().create(request));
    expect(error.message).toBe("Jira answered with a redirect (HTTP 302): TICKET_BASE_URL is not the Jira site's address");
    expect(error).toMatchObject({ status: 302, mayExist: false });
    expect(jira.created.length).toBe(made);
  });

  it('refuses an answer that is not JSON', async () => {
    jira.mode = 'garbage';
    const error = await providerError(jiraProvider().create(request));
    expect(error.message).toBe('Jira answered without an issue key');
  });

  it('refuses an answer of more than 1 MB without reading the rest', async () => {
    jira.mode = 'oversized';
    const error = await providerError(jiraProvider().create(request));
    expect(error.message).toBe('Jira answered with more than 1 MB');
    expect(error.status).toBeUndefined();
  });

  it('gives up after TICKET_TIMEOUT_MS, without retrying', async () => {
    jira.mode = 'slow'; // it would answer 201 after 3 s: an error at all means the timeout fired (how soon: npm run bench -- tickets)
    const before = jira.received.length;
    const error = await providerError(jiraProvider({ TICKET_TIMEOUT_MS: '200' }).create(request));
    expect(error.message).toBe('Jira did not answer: no answer within 0.2 s');
    expect(error.status).toBeUndefined();
    expect(jira.received.length - before).toBe(1);
  });

  it("ends the call by the create's deadline when that comes before TICKET_TIMEOUT_MS (the time the route spent before it counts)", async () => {
    jira.mode = 'slow';
    const error = await providerError(jiraProvider({ TICKET_TIMEOUT_MS: '20000' }).create(request, Date.now() + 1_300));
    expect(error.message).toMatch(/^Jira did not answer: no answer within 1\.[0-3] s$/);
    expect(error.mayExist).toBe(true);
  });

  it('does not call at all with under a second left before the deadline: nothing sent, so no ticket may exist', async () => {
    const before = jira.received.length;
    const error = await providerError(jiraProvider().create(request, Date.now() + 500));
    expect(error.message).toMatch(/^Jira was not asked: the request had used its time/);
    expect(error.mayExist).toBe(false);
    expect(jira.received.length).toBe(before);
  });

  it('reports a refused connection', async () => {
    const closedPort = await freePort();
    const error = await providerError(jiraProvider({ TICKET_BASE_URL: `http://127.0.0.1:${closedPort}` }).create(request));
    expect(error.message).toBe('Jira did not answer: connection failed (ECONNREFUSED)');
  });
});

describe('ticket configuration', () => {
  function configError(env: NodeJS.ProcessEnv): ServiceUnavailable {
    try {
      ticketProvider(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ServiceUnavailable);
      expect((error as ServiceUnavailable).status).toBe(503);
      return error as ServiceUnavailable;
    }
    return expect.fail('ticketProvider() should have thrown');
  }

  it('is null when TICKET_PROVIDER is unset or empty', () => {
    expect(ticketProvider({})).toBeNull();
    expect(ticketProvider({ TICKET_PROVIDER: '', TICKET_BASE_URL: 'https://acme.atlassian.net' })).toBeNull();
    expect(ticketProvider({ TICKET_PROVIDER: '  ' })).toBeNull();
  });

  it('names every missing Jira variable', () => {
    expect(configError({ TICKET_PROVIDER: 'jira' }).message).toBe(
      "TICKET_PROVIDER is 'jira' but its configuration is incomplete: set TICKET_BASE_URL, TICKET_PROJECT_KEY, TICKET_USER_EMAIL, TICKET_API_TOKEN (or TICKET_API_TOKEN_ARN).",
    );
    expect(configError(jiraEnv({ TICKET_API_TOKEN: '' })).message).toMatch(/set TICKET_API_TOKEN \(or TICKET_API_TOKEN_ARN\)\.$/);
    expect(ticketProvider(jiraEnv({ TICKET_API_TOKEN: '', TICKET_API_TOKEN_ARN: 'arn:aws:secretsmanager:local:0:secret:jira' }))?.name).toBe('jira');
  });

  it('names the missing webhook URL', () => {
    expect(configError({ TICKET_PROVIDER: 'webhook', TICKET_WEBHOOK_TOKEN: 't' }).message).toBe(
      "TICKET_PROVIDER is 'webhook' but its configuration is incomplete: set TICKET_WEBHOOK_URL.",
    );
  });

  it('refuses a Jira user that is no email address, as Jira Cloud would refuse every call', () => {
    for (const bad of ['ops', 'ops@', 'two words@example.com']) {
      expect(configError(jiraEnv({ TICKET_USER_EMAIL: bad })).message).toBe(
        'TICKET_USER_EMAIL must be the email address of the Atlassian account that owns the API token.',
      );
    }
    expect(ticketProvider(jiraEnv({ TICKET_USER_EMAIL: 'jira-bot@acme.example' }))?.name).toBe('jira');
  });

  it('refuses an unknown provider', () => {
    expect(configError({ TICKET_PROVIDER: 'servicenow' }).message).toBe(
      "TICKET_PROVIDER 'servicenow' is unknown: set it to 'jira' or 'webhook', or leave it unset.",
    );
  });

  it('refuses URLs that are not https or carry credentials, without echoing them', () => {
    expect(configError(jiraEnv({ TICKET_BASE_URL: 'acme.atlassian.net' })).message).toBe('TICKET_BASE_URL is not a valid URL.');
    expect(configError(jiraEnv({ TICKET_BASE_URL: 'http://acme.atlassian.net' })).message).toMatch(/^TICKET_BASE_URL must be an https URL/);
    const withPassword = configError({ TICKET_PROVIDER: 'webhook', TICKET_WEBHOOK_URL: 'https://bot:hunter2@hooks.example.com/t' });
    expect(withPassword.message).toMatch(/^TICKET_WEBHOOK_URL must be an https URL without credentials/);
    expect(withPassword.message).not.toContain('hunter2');
  });

  it('refuses a timeout that is not a positive number of milliseconds', () => {
    for (const bad of ['10s', '0', '20001']) {
      expect(configError(jiraEnv({ TICKET_TIMEOUT_MS: bad })).message).toBe('TICKET_TIMEOUT_MS must be a whole number of milliseconds from 1 to 20000.');
    }
  });
});

describe('Jira API token from Secrets Manager', () => {
  const ARN = 'arn:aws:secretsmanager:local:000000000000:secret:jira-token';
  let secretsManager: Server;
  const fetched: string[] = [];
  const saved = { ...process.env };

  beforeAll(async () => {
    // Speaks the Secrets Manager JSON protocol for GetSecretValue.
    secretsManager = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const { SecretId } = JSON.parse(body) as { SecretId: string };
        fetched.push(SecretId);
        res.writeHead(SecretId === ARN ? 200 : 400, { 'Content-Type': 'application/x-amz-json-1.1' });
        res.end(
          JSON.stringify(SecretId === ARN ? { ARN, Name: 'jira-token', SecretString: `${TOKEN}\n`, VersionId: 'v1' } : { __type: 'ResourceNotFoundException' }),
        );
      });
    });
    await new Promise<void>((r) => secretsManager.listen(0, '127.0.0.1', () => r()));
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${(secretsManager.address() as AddressInfo).port}`,
      AWS_REGION: 'local',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      TICKET_API_TOKEN_ARN: ARN,
    });
    delete process.env.TICKET_API_TOKEN;
    forgetSecrets();
  });

  afterAll(async () => {
    await new Promise<void>((r) => secretsManager.close(() => r()));
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
    forgetSecrets();
  });

  it('reads TICKET_API_TOKEN through its _ARN twin, once for many requests (again a minute later)', async () => {
    const provider = jiraProvider({ TICKET_API_TOKEN: undefined, TICKET_API_TOKEN_ARN: ARN });
    expect((await provider.create(request)).key).toMatch(/^OPS-\d+$/);
    expect(jira.received.at(-1)!.headers.authorization).toBe(BASIC);
    await provider.create(request);
    expect(fetched).toEqual([ARN]);
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
