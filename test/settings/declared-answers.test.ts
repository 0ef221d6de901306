// Every status a settings write answers is declared in the served OpenAPI document (a
// client generated from it handles exactly those): a rule PUT with a malformed If-Match
// answers 400, a general-settings save that keeps losing to concurrent saves 409, and one
// DynamoDB keeps throttling 503 with Retry-After (once throttled, it is retried and saved).
// Through the settings handler on DynamoDB Local; the proxy in front of it makes the
// saves lose or be throttled (DynamoDB's cancelled transaction and errors, as it sends them).
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as settings } from '../../functions/settings.js';
import { getGeneralSettings } from '../../shared/db/settings.js';
import { liveOpenApiDocument } from '../../shared/http/openapi-live.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';
import { call, type Handler } from '../support/events.js';
import { userToken, useTestJwtSecret } from '../support/tokens.js';

let proxy: DynamoProxy;
let superadmin: string;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  useTestJwtSecret();
  superadmin = await userToken('superadmin', 'declared-super');
});

const put = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(settings as Handler, {
    method: 'PUT',
    path,
    routeKey: `PUT ${path}`,
    headers: { authorization: `Bearer ${superadmin}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** The statuses the served document declares for an operation. */
const declared = (method: string, path: string) => Object.keys((liveOpenApiDocument().paths[path] as any)[method].responses);

describe('statuses the settings writes answer are declared', () => {
  it('PUT of a rule set: a malformed If-Match is a 400', async () => {
    const answer = await put('/api/settings/issue-rules', { content: 'grouping: {}' }, { 'if-match': 'v1' });
    expect(answer.statusCode).toBe(400);
    expect(answer.json!.detail).toMatch(/If-Match/);
    expect(declared('put', '/api/settings/issue-rules')).toEqual(expect.arrayContaining(['400', '409']));
  });

  it('PUT of the general settings: a save that keeps losing to concurrent saves is a 409 and changes nothing', async () => {
    let lost = 0;
    const stop = proxy.watch(({ operation }) => {
      if (operation !== 'TransactWriteItems') return undefined;
      lost++;
      return {
        type: 'TransactionCanceledException',
        message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, None]',
        fields: { CancellationReasons: [{ Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' }, { Code: 'None' }] },
      };
    });
    let answer: Awaited<ReturnType<typeof put>>;
    try {
      answer = await put('/api/settings/general', { health_scoring_method: 'ai', alert_criticality_method: 'rules' });
    } finally {
      stop();
    }
    expect(lost).toBeGreaterThan(1); // read again and retried before giving up
    expect(answer.statusCode).toBe(409);
    expect(answer.headers?.['Content-Type'] ?? answer.headers?.['content-type']).toMatch(/problem\+json/);
    expect(await getGeneralSettings()).toMatchObject({ health_scoring_method: 'rules', revision: 0 });
    expect(declared('put', '/api/settings/general')).toContain('409');
  });
});

describe('a request DynamoDB throttles', () => {
  /** DynamoDB's answer to a transaction it cancels for capacity (an index or partition over its throughput). */
  const throttledTransaction = {
    type: 'TransactionCanceledException',
    message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [ThrottlingError, None]',
    fields: {
      CancellationReasons: [
        { Code: 'ThrottlingError', Message: 'Throughput exceeds the current capacity for one or more global secondary indexes.' },
        { Code: 'None' },
      ],
    },
  };

  /** A PUT of the general settings while DynamoDB throttles its first `times` transactions: the answer, and how many were sent. */
  async function saveThrottled(times: number, body: Record<string, string>) {
    let sent = 0;
    const stop = proxy.watch(({ operation }) => (operation === 'TransactWriteItems' && sent++ < times ? throttledTransaction : undefined));
    try {
      return { answer: await put('/api/settings/general', body), sent };
    } finally {
      stop();
    }
  }

  it('a save throttled once is retried and saved', async () => {
    const { answer, sent } = await saveThrottled(1, { health_scoring_method: 'ai', alert_criticality_method: 'rules' });
    expect(sent).toBe(2);
    expect(answer.statusCode).toBe(200);
    expect(await getGeneralSettings()).toMatchObject({ health_scoring_method: 'ai', revision: 1 });
  });

  it('a save throttled on every attempt is a 503 with Retry-After, declared, and changes nothing', async () => {
    const { answer, sent } = await saveThrottled(Number.POSITIVE_INFINITY, { health_scoring_method: 'rules', alert_criticality_method: 'rules' });
    expect(sent).toBe(5);
    expect(answer.statusCode).toBe(503);
    expect(answer.headers?.['Retry-After']).toBe('5');
    expect(answer.json).toMatchObject({ status: 503, detail: expect.stringContaining('AWS throttled the request') });
    expect(await getGeneralSettings()).toMatchObject({ health_scoring_method: 'ai', revision: 1 });
    expect(declared('put', '/api/settings/general')).toContain('503');
  });

  it('a read throttled past the client’s retries is a 503 with Retry-After, not a 500', async () => {
    let throttled = 0;
    const stop = proxy.watch(({ operation }) =>
      operation === 'GetItem' && ++throttled
        ? { type: 'ProvisionedThroughputExceededException', message: 'The level of configured provisioned throughput for the table was exceeded.' }
        : undefined,
    );
    let answer: Awaited<ReturnType<typeof put>>;
    try {
      answer = await call(settings as Handler, {
        method: 'GET',
        path: '/api/settings/general',
        routeKey: 'GET /api/settings/general',
        headers: { authorization: `Bearer ${superadmin}` },
      });
    } finally {
      stop();
    }
    expect(throttled).toBeGreaterThanOrEqual(4); // the AWS client's own attempts, with its throttling backoff
    expect(answer.statusCode).toBe(503);
    expect(answer.headers?.['Retry-After']).toBe('5');
    expect(declared('get', '/api/settings/general')).toContain('503');
  }, 30_000);
});

describe('a request DynamoDB fails', () => {
  it('a read DynamoDB answers 500 past the client’s retries is a 503 with Retry-After that says to check, not a 500', async () => {
    let failed = 0;
    const stop = proxy.watch(({ operation }) =>
      operation === 'GetItem' && ++failed ? { type: 'InternalServerError', message: 'Internal server error', status: 500 } : undefined,
    );
    let answer: Awaited<ReturnType<typeof put>>;
    try {
      answer = await call(settings as Handler, {
        method: 'GET',
        path: '/api/settings/general',
        routeKey: 'GET /api/settings/general',
        headers: { authorization: `Bearer ${superadmin}` },
      });
    } finally {
      stop();
    }
    expect(failed).toBeGreaterThanOrEqual(4); // the AWS client's own attempts
    expect(answer.statusCode).toBe(503);
    expect(answer.headers?.['Retry-After']).toBe('5');
    expect(answer.json).toMatchObject({ status: 503, detail: expect.stringContaining('Check what is stored, then retry') });
  });
});

// Last: it changes the stored settings the tests above start from.
describe('general settings with If-Match', () => {
  it("GET answers the revision as its ETag; a PUT made on an older one is a 409 that keeps the other superadmin's save", async () => {
    const get = () =>
      call(settings as Handler, {
        method: 'GET',
        path: '/api/settings/general',
        routeKey: 'GET /api/settings/general',
        headers: { authorization: `Bearer ${superadmin}` },
      });
    const first = await get();
    const etag = first.headers!.ETag as string;
    expect(etag).toMatch(/^"r\d+"$/);
    // Another superadmin changes the health method on what both read (a save of what is stored changes nothing).
    const read = first.json!.health_scoring_method;
    const changed = read === 'ai' ? 'rules' : 'ai';
    const otherCriticality = first.json!.alert_criticality_method === 'ai' ? 'rules' : 'ai';
    const saved = await put('/api/settings/general', { ...first.json, health_scoring_method: changed }, { 'if-match': etag });
    expect(saved.statusCode).toBe(200);
    // Its answer names the revision it left, which a GET now answers too.
    expect(saved.headers!.ETag).not.toBe(etag);
    expect(saved.headers!.ETag).toBe((await get()).headers!.ETag);
    // The same save sent again on the revision it was made on (its answer lost on the way): stored already, so it
    // succeeded, with the revision it left; no 409 blaming its own first try.
    const retried = await put('/api/settings/general', { ...first.json, health_scoring_method: changed }, { 'if-match': etag });
    expect(retried.statusCode).toBe(200);
    expect(retried.headers!.ETag).toBe(saved.headers!.ETag);
    // This one, from a page read before, changes the other setting and sends the old health method with it: refused.
    const stale = await put('/api/settings/general', { health_scoring_method: read, alert_criticality_method: otherCriticality }, { 'if-match': etag });
    expect(stale.statusCode).toBe(409);
    expect(stale.json).toMatchObject({ current: { health_scoring_method: changed }, current_etag: expect.stringMatching(/^"r\d+"$/) });
    expect(await getGeneralSettings()).toMatchObject({ health_scoring_method: changed, alert_criticality_method: first.json!.alert_criticality_method });
    // Made again on what is stored now, it applies; a malformed If-Match is a 400.
    const now = (await get()).headers!.ETag as string;
    expect((await put('/api/settings/general', { health_scoring_method: 'ai', alert_criticality_method: 'ai' }, { 'if-match': now })).statusCode).toBe(200);
    expect((await put('/api/settings/general', { health_scoring_method: 'rules', alert_criticality_method: 'rules' }, { 'if-match': 'r1' })).statusCode).toBe(
      400,
    );
    expect(declared('put', '/api/settings/general')).toEqual(expect.arrayContaining(['400', '409']));
  });
});
