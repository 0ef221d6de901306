// Contended writes through the local server: 20 simultaneous requests at each
// write that people race on (issue and AI-issue triage, user changes, direct
// rule writes, reviews and withdrawals of one proposal). Every answer is a success or a 409,
// never a 5xx, and what is stored afterwards is one of the requests' values.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDynamoProxy, type DynamoProxy } from '../support/dynamo-proxy.js';
import { handler as recompute } from '../../functions/recompute.js';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';
import { acquireLock, lockHolder } from '../../shared/db/locks.js';
import { PULL_LOCK, START_LEASE_MS } from '../../shared/metric-pull/lock.js';
import { pullMetrics } from '../../shared/metric-pull/pull.js';
import { randomUUID } from 'node:crypto';
import { localWorkersSettled } from '../../shared/worker-invoke.js';
import { userToken } from '../support/tokens.js';

const PARALLEL = 20;

let service: LocalService;
let proxy: DynamoProxy;
let superadmin: string;
let admin: string;

beforeAll(async () => {
  delete process.env.LLM_PROVIDER;
  // Through a proxy: a test can hold a request of the service's on its way to DynamoDB.
  proxy = await startDynamoProxy(inject('dynamoEndpoint'));
  service = await startTestService({ adminPassword: 'contention-admin-password', demoClusters: 8, dynamoEndpoint: proxy.endpoint });
  superadmin = await userToken('superadmin', 'race-super');
  admin = await userToken('admin', 'race-admin');
  await recompute();
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await proxy?.close();
});

async function call(token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** Sends `PARALLEL` requests at once and returns their answers. */
function race(send: (i: number) => Promise<{ status: number; body: any }>) {
  return Promise.all(Array.from({ length: PARALLEL }, (_, i) => send(i)));
}

function expectNoServerError(answers: { status: number; body: any }[], allowed: number[]) {
  const statuses = answers.map((a) => a.status);
  expect(
    statuses.filter((s) => s >= 500),
    JSON.stringify(answers.filter((a) => a.status >= 500).map((a) => a.body)),
  ).toEqual([]);
  expect(
    statuses.every((s) => allowed.includes(s)),
    statuses.join(','),
  ).toBe(true);
  for (const a of answers.filter((x) => x.status === 409)) expect(a.body.detail).toEqual(expect.any(String));
}

describe(`${PARALLEL} simultaneous writes`, () => {
  it('PATCH of one rule issue: successes or 409, and the stored notes are one of the requests', async () => {
    const [issue] = (await call(admin, 'GET', '/api/issues?days=30')).body.issues;
    expect(issue).toBeDefined();
    const answers = await race((i) =>
      call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { notes: `note ${i}`, triage_status: i % 2 ? 'Investigating' : 'Acknowledged' }),
    );
    expectNoServerError(answers, [200, 409]);
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(0);
    const stored = (await call(admin, 'GET', `/api/issues/${issue.issue_id}`)).body.issue;
    const applied = answers.flatMap((a, i) => (a.status === 200 ? [`note ${i}`] : []));
    expect(applied).toContain(stored.notes);
  });

  it('PATCH of one AI issue: successes or 409, and the stored notes are one of the requests', async () => {
    const [issue] = (await call(admin, 'GET', '/api/ai-issues?days=30')).body.issues;
    expect(issue).toBeDefined();
    const answers = await race((i) => call(admin, 'PATCH', `/api/ai-issues/${issue.issue_id}`, { notes: `ai note ${i}` }));
    expectNoServerError(answers, [200, 409]);
    const stored = (await call(admin, 'GET', `/api/ai-issues/${issue.issue_id}`)).body.issue;
    const applied = answers.flatMap((a, i) => (a.status === 200 ? [`ai note ${i}`] : []));
    expect(applied).toContain(stored.notes);
  });

  it('PATCH of one user: successes or 409, and the stored role is one of the requests', async () => {
    await userToken('viewer', 'race-target');
    const email = 'race-target@example.com';
    const answers = await race((i) => call(superadmin, 'PATCH', `/api/settings/users/${email}`, { role: i % 2 ? 'admin' : 'viewer', is_active: true }));
    expectNoServerError(answers, [200, 409]);
    const users = (await call(superadmin, 'GET', '/api/settings/users')).body;
    const target = (users.users ?? users).find((u: any) => u.email === email);
    const applied = answers.flatMap((a, i) => (a.status === 200 ? [i % 2 ? 'admin' : 'viewer'] : []));
    expect(applied).toContain(target.role);
  });

  it('a write that keeps no version refuses an If-Match (412) and changes nothing, where it was ignored and the write done', async () => {
    const live = (await call(admin, 'GET', '/api/settings/metric-sources')).body;
    const proposal = await call(admin, 'PUT', '/api/settings/metric-sources', { content: `# withdrawn under a precondition\n${live.content}` });
    const id = proposal.body.change_id;
    const statusOf = async () => (await call(admin, 'GET', `/api/settings/config-changes/${id}`)).body.status;
    const guarded = await call(admin, 'POST', `/api/settings/config-changes/${id}/withdraw`, undefined, { 'If-Match': `"v${live.version}"` });
    expect(guarded.status).toBe(412);
    expect(guarded.body).toMatchObject({ status: 412, title: 'Precondition Failed', detail: expect.stringMatching(/without If-Match/) });
    expect(await statusOf()).toBe('pending');
    // `*` holds for any current representation; no If-Match is no precondition
    expect((await call(admin, 'POST', `/api/settings/config-changes/${id}/withdraw`, undefined, { 'If-Match': '*' })).status).toBe(200);
    expect(await statusOf()).toBe('withdrawn');
  });

  it('PATCH and DELETE of a user with the If-Match of its list entry: applied while it holds, 409 once another change moved it', async () => {
    await userToken('viewer', 'guarded-target');
    const email = 'guarded-target@example.com';
    const listed = async () => (await call(superadmin, 'GET', '/api/settings/users')).body.users.find((u: any) => u.email === email);
    const version = (await listed()).version;
    const answers = await race((i) =>
      call(superadmin, 'PATCH', `/api/settings/users/${email}`, { role: i % 2 ? 'admin' : 'viewer', is_active: true }, { 'If-Match': `"u${version}"` }),
    );
    expectNoServerError(answers, [200, 409]);
    // Only a change is a new version: the one that changed the role, and none after it on the same read.
    const changed = answers.filter((a) => a.status === 200 && a.body.user.version !== version);
    expect(changed.length).toBeLessThanOrEqual(1);
    expect((await listed()).version).toBe(version + changed.length);
    expect((await call(superadmin, 'DELETE', `/api/settings/users/${email}`, undefined, { 'If-Match': '"u0"' })).status).toBe(409);
    expect(await listed()).toBeDefined();
  });

  it('direct PUTs of one rule set: each success is its own version, nothing else moves', async () => {
    const live = (await call(superadmin, 'GET', '/api/settings/health-rules')).body;
    const before = (await call(superadmin, 'GET', '/api/settings/health-rules/versions')).body.current_version;
    const answers = await race((i) => call(superadmin, 'PUT', '/api/settings/health-rules', { content: `# edit ${i}\n${live.content}` }));
    expectNoServerError(answers, [200, 409]);
    const versions = answers.filter((a) => a.status === 200).map((a) => a.body.version as number);
    expect(new Set(versions).size).toBe(versions.length);
    const after = (await call(superadmin, 'GET', '/api/settings/health-rules/versions')).body.current_version;
    expect(after).toBe(before + versions.length);
  });

  it('reviews of one proposal: exactly one decides it, the others answer 409', async () => {
    const live = (await call(admin, 'GET', '/api/settings/risk-rules')).body;
    const proposal = await call(admin, 'PUT', '/api/settings/risk-rules', { content: `# proposed under contention\n${live.content}` });
    expect(proposal.status).toBe(200);
    const id = proposal.body.change_id;
    const answers = await race((i) =>
      call(superadmin, 'POST', `/api/settings/config-changes/${id}/review`, { action: i % 2 ? 'approve' : 'reject', note: `review ${i}` }),
    );
    expectNoServerError(answers, [200, 409]);
    const decided = answers.filter((a) => a.status === 200);
    expect(decided).toHaveLength(1);
    const detail = (await call(superadmin, 'GET', `/api/settings/config-changes/${id}`)).body;
    expect(detail.status).toBe(decided[0]!.body.status);
  });

  it('its proposer withdrawing one proposal while it is reviewed: exactly one closes it, the others answer 409', async () => {
    const live = (await call(admin, 'GET', '/api/settings/issue-rules')).body;
    const proposal = await call(admin, 'PUT', '/api/settings/issue-rules', { content: `# withdrawn or reviewed under contention\n${live.content}` });
    const id = proposal.body.change_id;
    const answers = await race((i) =>
      i % 2
        ? call(admin, 'POST', `/api/settings/config-changes/${id}/withdraw`)
        : call(superadmin, 'POST', `/api/settings/config-changes/${id}/review`, { action: 'reject', note: `review ${i}` }),
    );
    expectNoServerError(answers, [200, 409]);
    const closed = answers.filter((a) => a.status === 200);
    expect(closed).toHaveLength(1);
    const detail = (await call(superadmin, 'GET', `/api/settings/config-changes/${id}`)).body;
    expect(detail.status).toBe(closed[0]!.body.status);
  });
});

describe(`${PARALLEL} simultaneous starts`, () => {
  it('Pull now pressed at once: one pull starts, the others answer already_running', async () => {
    // The run started holds its worker at its first read of the rule sets until every request is answered: no
    // request can come after it ended, so exactly one may say "started". A request that looked whether the lock
    // was held, before any worker had taken it, said "started" too, for a run that then found it held and did nothing.
    let answered = () => {};
    const allAnswered = new Promise<void>((resolve) => {
      answered = resolve;
    });
    const stopHolding = proxy.watch((r) => (String(r.input.TableName).endsWith('-rules') ? { hold: allAnswered } : undefined));
    let answers: { status: number; body: any }[];
    try {
      answers = await race(() => call(admin, 'POST', '/api/metric-sources/pull'));
    } finally {
      answered();
      stopHolding();
    }
    await localWorkersSettled();
    expectNoServerError(answers, [200, 202]);
    expect(answers.map((a) => a.body.status).sort()).toEqual(['started', ...Array(PARALLEL - 1).fill('already_running')].sort());
    expect(await lockHolder(PULL_LOCK)).toBeUndefined();
    expect(
      (await call(admin, 'GET', '/api/metric-sources/status')).body.last_run.started_at >= answers.find((a) => a.body.status === 'started')!.body.requested_at,
    ).toBe(true);
  });

  it("the worker's event delivered twice (asynchronous invocations are at least once): one run, the other finds the lock taken", async () => {
    const runId = randomUUID();
    expect((await acquireLock(PULL_LOCK, runId, START_LEASE_MS)).acquired).toBe(true); // as Pull now takes it
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The first delivery's run is held at its first read of the rule sets, so the second comes while it runs.
    const stopHolding = proxy.watch((r) => (String(r.input.TableName).endsWith('-rules') ? { hold: held } : undefined));
    try {
      const first = pullMetrics({ runId });
      await expect.poll(async () => (await lockHolder(PULL_LOCK))?.owner !== runId).toBe(true); // taken over
      expect(await pullMetrics({ runId })).toMatchObject({ outcome: 'locked' });
      release();
      expect((await first).outcome).not.toBe('locked');
    } finally {
      release();
      stopHolding();
    }
    expect(await lockHolder(PULL_LOCK)).toBeUndefined();
  });
});
