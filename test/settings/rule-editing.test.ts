// Rule editing with approvals (issue 6) through the real local server on
// DynamoDB Local: the spec's state table row by row, every error, concurrent
// approvals, a failed write, version history, general settings, and metric
// sources edited as a fourth rule set (issue 20 §1).
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listAudit } from '../../shared/db/audit.js';
import { PENDING_PER_PROPOSER } from '../../shared/db/config-changes.js';
import { deleteItem, getItem, putItem } from '../../shared/db/client.js';
import { getCurrentRuleSet } from '../../shared/db/rules.js';
import { defaultRuleText, RULE_SET_NAMES, type RuleSetName } from '../../shared/rules/defaults.js';
import { loadMetricSources } from '../../shared/rules/load.js';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';
import { yamlBombs } from './hostile-yaml.js';

let service: LocalService;
const tokens = {} as Record<'superadmin' | 'admin' | 'viewer' | 'otherAdmin', string>;

beforeAll(async () => {
  service = await startTestService({ adminPassword: 'rules-admin-password', demoClusters: 12 });
  tokens.superadmin = await userToken('superadmin', 'rules-super');
  tokens.admin = await userToken('admin', 'rules-admin');
  tokens.viewer = await userToken('viewer', 'rules-viewer');
  tokens.otherAdmin = await userToken('admin', 'rules-admin-2');
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

type Who = keyof typeof tokens;
async function call(who: Who | null, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { ...(who ? { Authorization: `Bearer ${tokens[who]}` } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** The live health rules with one change applied, as YAML. */
async function healthRulesWith(change: (rules: any) => void): Promise<string> {
  const rules = parse((await call('superadmin', 'GET', '/api/settings/health-rules')).body.content);
  change(rules);
  return stringify(rules);
}

const version = async (name: RuleSetName) => (await getCurrentRuleSet(name))?.version ?? 0;

// Lines of the shipped rules/metric-sources.yaml that the tests edit.
const SHIPPED_URL = 'url: http://127.0.0.1:9090';
const SHIPPED_AUTH = 'type: none ';
/** The shipped metric sources with one line changed (comments kept); throws when the line is not there. */
function metricSourcesWith(from: string, to: string): string {
  const shipped = defaultRuleText('metric-sources');
  if (!shipped.includes(from)) throw new Error(`rules/metric-sources.yaml has no \`${from}\``);
  return shipped.replace(from, to);
}
const actionsInAudit = async (action: string) => (await listAudit(action)).length;

describe('reading rule sets', () => {
  it.each(RULE_SET_NAMES)('GET %s answers the shipped YAML, comments and all, as the live version 0', async (name) => {
    const { status, body } = await call('viewer', 'GET', `/api/settings/${name}`);
    expect(status).toBe(200);
    expect(body).toEqual({ content: defaultRuleText(name), source: 'live', version: 0, updated_at: null, updated_by: null });
    expect(body.content).toMatch(/^# /m);
  });
});

describe('refusing bad rule text (422, nothing written)', () => {
  const cases: [string, RuleSetName, string, RegExp][] = [
    ['not YAML', 'health-rules', 'scoring:\n  lookback_days: [1, 2\n', /invalid YAML at line \d+, column \d+/],
    ['not a mapping', 'issue-rules', '- just\n- a list\n', /must be a YAML mapping/],
    ['a scalar', 'risk-rules', '42', /must be a YAML mapping/],
    ['no `scoring` at the top', 'health-rules', 'risk:\n  lookback_days: 7\n', /top-level key `scoring`/],
    ['no `risk` at the top', 'risk-rules', 'scoring: {}\n', /top-level key `risk`/],
    ['failing the full schema', 'risk-rules', 'risk:\n  lookback_days: 0\n  rules: []\n', /risk\.lookback_days: /],
    [
      'an issue rule without the cluster key',
      'issue-rules',
      defaultRuleText('issue-rules').replace('keys: [cluster, alert_name]', 'keys: [alert_name]'),
      /must include `cluster`/,
    ],
    [
      'a pattern with characters globs do not have',
      'issue-rules',
      defaultRuleText('issue-rules').replace('"*Down|*Unavailable|*Unreachable"', '"(a+)+$"'),
      /use letters, digits/,
    ],
    ['duplicate keys', 'health-rules', 'scoring: {}\nscoring: {}\n', /invalid YAML at line 2, column 1: the key `scoring` appears twice/],
    ['an empty alternative', 'issue-rules', defaultRuleText('issue-rules').replace('"*Down|*Unavailable|*Unreachable"', '"*Down||x"'), /empty alternative/],
    ['no `prometheus` at the top', 'metric-sources', 'cluster: { label: cluster_id, match: id }\n', /top-level key `prometheus`/],
    [
      'a Prometheus URL with credentials',
      'metric-sources',
      metricSourcesWith(SHIPPED_URL, 'url: http://u:p@host'),
      /prometheus\.url: no credentials in the URL/,
    ],
    ['sigv4 without a region', 'metric-sources', metricSourcesWith(SHIPPED_AUTH, 'type: sigv4'), /prometheus\.auth\.region: /],
    [
      'sigv4 over plain http to another machine (the session token would travel in clear)',
      'metric-sources',
      metricSourcesWith(SHIPPED_URL, 'url: http://aps.internal:9090').replace(SHIPPED_AUTH, 'type: sigv4\n    region: us-east-1 '),
      /prometheus\.url: sigv4 auth needs an https URL/,
    ],
    ['a metric_key twice', 'metric-sources', metricSourcesWith('metric_key: qps', 'metric_key: node_count'), /metrics: each metric_key at most once/],
    ['an unknown metric_key', 'metric-sources', metricSourcesWith('metric_key: qps', 'metric_key: queries_per_fortnight'), /metrics\.4\.metric_key: /],
    ['scale 0', 'metric-sources', metricSourcesWith('  - metric_key: qps\n', '  - metric_key: qps\n    scale: 0\n'), /metrics\.4\.scale: scale 0/],
    [
      'a scale too small to leave any value (5e-324: every point 0 or next to it)',
      'metric-sources',
      metricSourcesWith('  - metric_key: qps\n', '  - metric_key: qps\n    scale: 5e-324\n'),
      /metrics\.4\.scale: scale must be at least 1e-12: a smaller one would turn every value into 0, as scale 0 would/,
    ],
    [
      'a negative scale (no metric is negative: every point would be refused)',
      'metric-sources',
      metricSourcesWith('  - metric_key: qps\n', '  - metric_key: qps\n    scale: -1\n'),
      /metrics\.4\.scale: scale must be above 0/,
    ],
  ];
  it.each(cases)('%s', async (_what, name, content, message) => {
    const before = await version(name);
    const proposals = (await call('superadmin', 'GET', '/api/settings/config-changes')).body.total;
    for (const who of ['superadmin', 'viewer'] as const) {
      const { status, body } = await call(who, 'PUT', `/api/settings/${name}`, { content });
      expect(status).toBe(422);
      expect(body.detail).toMatch(message);
      expect(body.errors[0].loc).toEqual(['body', 'content']);
    }
    expect(await version(name)).toBe(before);
    expect((await call('superadmin', 'GET', '/api/settings/config-changes')).body.total).toBe(proposals);
  });

  // The answer is checked here, not its time: `npm run bench -- rules` times the check of these bombs.
  it('refuses a YAML bomb (aliases and deep nesting) with a 422 naming the bound', async () => {
    for (const { text: content } of yamlBombs()) {
      const { status, body } = await call('superadmin', 'PUT', '/api/settings/issue-rules', { content });
      expect(status).toBe(422);
      expect(body.detail).toMatch(/more than 50 aliases|more than 4000 YAML items|nested deeper than 32|more than 5000 lines|grouping: /);
      expect(body.detail).not.toMatch(/Maximum call stack|Error/);
    }
  });

  it('refuses content over 64 KB and a body without content', async () => {
    expect((await call('superadmin', 'PUT', '/api/settings/issue-rules', { content: `# ${'x'.repeat(64 * 1024)}` })).status).toBe(422);
    expect((await call('superadmin', 'PUT', '/api/settings/issue-rules', {})).status).toBe(422);
    expect((await call('superadmin', 'PUT', '/api/settings/issue-rules', { content: 'grouping: {}', extra: 1 })).status).toBe(422);
  });
});

describe('the state table (spec §3)', () => {
  it('(none) → no proposal: a superadmin writes the next version directly, audited, and the next computation uses it', async () => {
    const before = await version('health-rules');
    const audits = await actionsInAudit('rules_update');
    const proposals = (await call('superadmin', 'GET', '/api/settings/config-changes')).body.total;
    const content = await healthRulesWith((r) => (r.scoring.classification.warning = 41));
    const put = await call('superadmin', 'PUT', '/api/settings/health-rules', { content });
    expect(put).toEqual({ status: 200, body: { status: 'ok', applied: true, version: before + 1 } });
    const live = (await call('viewer', 'GET', '/api/settings/health-rules')).body;
    expect(live).toMatchObject({ content, source: 'live', version: before + 1, updated_by: 'rules-super' });
    expect((await call('viewer', 'GET', '/api/fleet/rules')).body.classification.warning).toBe(41);
    expect(await actionsInAudit('rules_update')).toBe(audits + 1);
    expect((await listAudit('rules_update'))[0]).toMatchObject({
      actor: 'rules-super',
      target: 'health-rules',
      detail: { version: before + 1, based_on: before },
    });
    expect((await call('superadmin', 'GET', '/api/settings/config-changes')).body.total).toBe(proposals);
  });

  it('the text in force, saved again, changes nothing: no version, no audit entry, no proposal', async () => {
    const live = (await call('viewer', 'GET', '/api/settings/risk-rules')).body;
    const [updates, proposals] = [await actionsInAudit('rules_update'), await actionsInAudit('change_propose')];
    expect(await call('superadmin', 'PUT', '/api/settings/risk-rules', { content: live.content })).toEqual({
      status: 200,
      body: { status: 'ok', applied: true, version: live.version },
    });
    const proposed = await call('admin', 'PUT', '/api/settings/risk-rules', { content: live.content });
    expect(proposed.status).toBe(422);
    expect(proposed.body.detail).toBe(`The proposed risk-rules changes nothing: the text is version ${live.version} as it stands: nothing to propose.`);
    expect(await version('risk-rules')).toBe(live.version);
    expect([await actionsInAudit('rules_update'), await actionsInAudit('change_propose')]).toEqual([updates, proposals]);
    // A comment is a change: versions keep the text as written.
    expect((await call('superadmin', 'PUT', '/api/settings/risk-rules', { content: `# why\n${live.content}` })).body.version).toBe(live.version + 1);
  });

  it('a proposal sent again after its answer was lost is the one it made; a save sent again on its old version is a 409 (DESIGN §4)', async () => {
    const live = (await call('viewer', 'GET', '/api/settings/risk-rules')).body;
    const mine = `# saved once\n${live.content}`;
    const saved = await call('superadmin', 'PUT', '/api/settings/risk-rules', { content: mine, base_version: live.version });
    expect(saved.body).toEqual({ status: 'ok', applied: true, version: live.version + 1 });
    const updates = await actionsInAudit('rules_update');
    // Again on the version it was made on: stale, as DESIGN §4 has every rule-set write naming a version no longer
    // current; the 409 names the current version (its own), and nothing changes.
    const again = await call('superadmin', 'PUT', '/api/settings/risk-rules', { content: mine, base_version: live.version });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ current_version: live.version + 1, base_version: live.version });
    expect(await version('risk-rules')).toBe(live.version + 1);
    expect(await actionsInAudit('rules_update')).toBe(updates);

    // A proposal sent twice: the first one's id, one proposal pending, one audit entry.
    const proposed = `# proposed once\n${mine}`;
    const proposals = await actionsInAudit('change_propose');
    const first = await call('otherAdmin', 'PUT', '/api/settings/risk-rules', { content: proposed, base_version: live.version + 1 });
    expect(first.body).toMatchObject({ status: 'pending', applied: false, base_version: live.version + 1 });
    const resent = await call('otherAdmin', 'PUT', '/api/settings/risk-rules', { content: proposed, base_version: live.version + 1 });
    expect(resent).toEqual(first);
    expect(await actionsInAudit('change_propose')).toBe(proposals + 1);
    const pending = (await call('otherAdmin', 'GET', '/api/settings/config-changes?status_filter=pending')).body.changes;
    expect(pending.filter((c: { rule_set: string }) => c.rule_set === 'risk-rules').map((c: { change_id: string }) => c.change_id)).toEqual([
      first.body.change_id,
    ]);
    // Withdrawn, it may be proposed again: a new proposal.
    expect((await call('otherAdmin', 'POST', `/api/settings/config-changes/${first.body.change_id}/withdraw`)).status).toBe(200);
    const anew = await call('otherAdmin', 'PUT', '/api/settings/risk-rules', { content: proposed, base_version: live.version + 1 });
    expect(anew.body.change_id).not.toBe(first.body.change_id);
    expect((await call('otherAdmin', 'POST', `/api/settings/config-changes/${anew.body.change_id}/withdraw`)).status).toBe(200);
  });

  it.each(['admin', 'viewer'] as const)('(none) → pending: a valid PUT by a %s creates a proposal and changes no rules', async (who) => {
    const before = await version('risk-rules');
    const live = (await call(who, 'GET', '/api/settings/risk-rules')).body.content;
    const content = live.replace('lookback_days: 7', 'lookback_days: 5');
    expect(content).not.toBe(live);
    const { status, body } = await call(who, 'PUT', '/api/settings/risk-rules', { content });
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'pending', applied: false, change_id: expect.stringMatching(/^\d{8}T\d{9}Z-[0-9a-f]{8}$/), base_version: before });
    expect(await version('risk-rules')).toBe(before);
    const detail = (await call(who, 'GET', `/api/settings/config-changes/${body.change_id}`)).body;
    expect(detail).toMatchObject({
      change_id: body.change_id,
      rule_set: 'risk-rules',
      status: 'pending',
      proposed_by: `rules-${who}`,
      base_version: before,
      current_content: live,
      base_content: live,
      proposed_content: content,
      current_version: before,
      stale: false,
      reviewed_by: null,
      reviewed_at: null,
      review_note: null,
      applied_version: null,
    });
    expect((await listAudit('change_propose'))[0]).toMatchObject({ actor: `rules-${who}`, target: body.change_id, detail: { rule_set: 'risk-rules' } });
  });

  it('pending → approved: the proposed YAML becomes the next version, with who proposed and who approved', async () => {
    const content = await healthRulesWith((r) => (r.scoring.classification.warning = 42));
    const proposal = (await call('admin', 'PUT', '/api/settings/health-rules', { content })).body;
    const base = await version('health-rules');
    const review = await call('superadmin', 'POST', `/api/settings/config-changes/${proposal.change_id}/review`, { action: 'approve', note: 'agreed' });
    expect(review).toEqual({ status: 200, body: { status: 'approved', change_id: proposal.change_id, applied: true, version: base + 1 } });
    expect((await call('viewer', 'GET', '/api/settings/health-rules')).body).toMatchObject({ content, version: base + 1, updated_by: 'rules-super' });
    expect((await call('viewer', 'GET', '/api/fleet/rules')).body.classification.warning).toBe(42);
    const detail = (await call('admin', 'GET', `/api/settings/config-changes/${proposal.change_id}`)).body;
    expect(detail).toMatchObject({ status: 'approved', reviewed_by: 'rules-super', review_note: 'agreed', applied_version: base + 1, impact: null });
    const newest = (await call('viewer', 'GET', '/api/settings/health-rules/versions')).body.versions[0];
    expect(newest).toMatchObject({ version: base + 1, content, updated_by: 'rules-super', change_id: proposal.change_id, proposed_by: 'rules-admin' });
    expect((await listAudit('change_approve'))[0]).toMatchObject({
      actor: 'rules-super',
      target: proposal.change_id,
      detail: { version: base + 1, proposed_by: 'rules-admin', note: 'agreed' },
    });
  });

  it('pending → rejected: nothing is applied, the note is kept and audited', async () => {
    const content = await healthRulesWith((r) => (r.scoring.classification.warning = 43));
    const proposal = (await call('viewer', 'PUT', '/api/settings/health-rules', { content })).body;
    const before = await getCurrentRuleSet('health-rules');
    const review = await call('superadmin', 'POST', `/api/settings/config-changes/${proposal.change_id}/review`, { action: 'reject', note: 'too strict' });
    expect(review).toEqual({ status: 200, body: { status: 'rejected', change_id: proposal.change_id, applied: false } });
    expect(await getCurrentRuleSet('health-rules')).toEqual(before);
    expect((await call('viewer', 'GET', `/api/settings/config-changes/${proposal.change_id}`)).body).toMatchObject({
      status: 'rejected',
      review_note: 'too strict',
      applied_version: null,
    });
    expect((await listAudit('change_reject'))[0]).toMatchObject({ target: proposal.change_id, detail: { note: 'too strict' } });
  });

  it('reviewing a proposal that is not pending → 409, and nothing changes', async () => {
    const content = await healthRulesWith((r) => (r.scoring.classification.warning = 44));
    const { change_id } = (await call('admin', 'PUT', '/api/settings/health-rules', { content })).body;
    expect((await call('superadmin', 'POST', `/api/settings/config-changes/${change_id}/review`, { action: 'reject', note: '' })).status).toBe(200);
    const before = await getCurrentRuleSet('health-rules');
    for (const action of ['approve', 'reject']) {
      const again = await call('superadmin', 'POST', `/api/settings/config-changes/${change_id}/review`, { action, note: '' });
      expect(again.status).toBe(409);
      expect(again.body.detail).toMatch(/not pending/);
    }
    expect(await getCurrentRuleSet('health-rules')).toEqual(before);
    expect((await call('admin', 'GET', `/api/settings/config-changes/${change_id}`)).body.status).toBe('rejected');
  });
});

describe('review errors', () => {
  let changeId: string;
  beforeEach(async () => {
    const content = await healthRulesWith((r) => (r.scoring.classification.warning = 45));
    changeId = (await call('admin', 'PUT', '/api/settings/health-rules', { content })).body.change_id;
  });

  it('unknown id → 404; bad action → 422; not a superadmin → 403; the proposal stays pending', async () => {
    expect((await call('superadmin', 'POST', '/api/settings/config-changes/no-such-change/review', { action: 'approve', note: '' })).status).toBe(404);
    expect((await call('superadmin', 'GET', '/api/settings/config-changes/no-such-change')).status).toBe(404);
    const bad = await call('superadmin', 'POST', `/api/settings/config-changes/${changeId}/review`, { action: 'merge', note: '' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].loc).toEqual(['body', 'action']);
    for (const who of ['admin', 'viewer'] as const) {
      expect((await call(who, 'POST', `/api/settings/config-changes/${changeId}/review`, { action: 'approve', note: '' })).status).toBe(403);
    }
    expect((await call('admin', 'GET', `/api/settings/config-changes/${changeId}`)).body.status).toBe('pending');
  });

  it('approving a proposal whose rule set moved on → 409 with both versions, and nothing changes', async () => {
    const moved = await healthRulesWith((r) => (r.scoring.classification.warning = 46));
    expect((await call('superadmin', 'PUT', '/api/settings/health-rules', { content: moved })).body.applied).toBe(true);
    const before = await getCurrentRuleSet('health-rules');
    expect((await call('superadmin', 'GET', `/api/settings/config-changes/${changeId}`)).body).toMatchObject({ stale: true, current_version: before!.version });
    const review = await call('superadmin', 'POST', `/api/settings/config-changes/${changeId}/review`, { action: 'approve', note: '' });
    expect(review.status).toBe(409);
    expect(review.body).toMatchObject({ current_version: before!.version, base_version: before!.version - 1 });
    expect(await getCurrentRuleSet('health-rules')).toEqual(before);
    expect((await call('superadmin', 'GET', `/api/settings/config-changes/${changeId}`)).body.status).toBe('pending');
  });

  it('a failed write leaves both the rules and the proposal unchanged (one transaction)', async () => {
    // Something already holds the version slot the approval would write: its
    // transaction fails after the rules part would have been written, were it not atomic.
    const before = await getCurrentRuleSet('health-rules');
    const slot = { pk: 'RULESET#health-rules', sk: `VERSION#${String(before!.version + 1).padStart(6, '0')}` };
    await putItem('rules', { ...slot, version: before!.version + 1, content: 'stray', parsed: '{}', updated_at: 'x', updated_by: 'stray' });
    const audits = await actionsInAudit('change_approve');
    const review = await call('superadmin', 'POST', `/api/settings/config-changes/${changeId}/review`, { action: 'approve', note: '' });
    expect(review.status).toBe(409);
    expect(await getCurrentRuleSet('health-rules')).toEqual(before);
    expect((await call('superadmin', 'GET', `/api/settings/config-changes/${changeId}`)).body).toMatchObject({
      status: 'pending',
      reviewed_by: null,
      applied_version: null,
    });
    expect(await actionsInAudit('change_approve')).toBe(audits);
    expect(await getItem('rules', slot, true)).toMatchObject({ content: 'stray' });
    await deleteItem('rules', slot); // tidy up for the tests after this one
  });
});

describe('concurrent approvals', () => {
  it('two proposals based on the same version: exactly one applies, the other answers 409 and stays pending', async () => {
    const base = await version('risk-rules');
    const live = (await call('admin', 'GET', '/api/settings/risk-rules')).body.content as string;
    const first = (await call('admin', 'PUT', '/api/settings/risk-rules', { content: live.replace(/lookback_days: \d+/, 'lookback_days: 3') })).body.change_id;
    const second = (await call('otherAdmin', 'PUT', '/api/settings/risk-rules', { content: live.replace(/lookback_days: \d+/, 'lookback_days: 4') })).body
      .change_id;
    const results = await Promise.all(
      [first, second].map((id) => call('superadmin', 'POST', `/api/settings/config-changes/${id}/review`, { action: 'approve', note: 'race' })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await version('risk-rules')).toBe(base + 1);
    const winner = results[0]!.status === 200 ? first : second;
    const loser = winner === first ? second : first;
    expect((await call('superadmin', 'GET', `/api/settings/config-changes/${winner}`)).body.status).toBe('approved');
    expect((await call('superadmin', 'GET', `/api/settings/config-changes/${loser}`)).body).toMatchObject({ status: 'pending', stale: true });
    expect((await getCurrentRuleSet('risk-rules'))!.change_id).toBe(winner);
  });
});

describe('racing reviews of one proposal', () => {
  it.each([
    ['approve', 'approve'],
    ['approve', 'reject'],
  ])('%s and %s at once: exactly one review lands, the other answers 409, the rules move at most once', async (a, b) => {
    const base = await version('issue-rules');
    const live = (await call('admin', 'GET', '/api/settings/issue-rules')).body.content as string;
    const { change_id } = (
      await call('admin', 'PUT', '/api/settings/issue-rules', { content: live.replace(/quiet_minutes: \d+/, `quiet_minutes: ${base + 31}`) })
    ).body;
    const results = await Promise.all(
      [a, b].map((action) => call('superadmin', 'POST', `/api/settings/config-changes/${change_id}/review`, { action, note: action })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const winner = results.find((r) => r.status === 200)!.body;
    const detail = (await call('superadmin', 'GET', `/api/settings/config-changes/${change_id}`)).body;
    expect(detail.status).toBe(winner.status);
    expect(await version('issue-rules')).toBe(winner.status === 'approved' ? base + 1 : base);
    expect(results.find((r) => r.status === 409)!.body.detail).toMatch(/not pending|is at version/);
  });
});

describe('who sees which proposals', () => {
  it("a superadmin sees all, others only their own; status_filter filters; another user's proposal is 404", async () => {
    const content = await healthRulesWith((r) => (r.scoring.classification.warning = 47));
    const mine = (await call('otherAdmin', 'PUT', '/api/settings/health-rules', { content })).body.change_id;
    const all = (await call('superadmin', 'GET', '/api/settings/config-changes')).body;
    expect(all.total).toBe(all.changes.length);
    expect(new Set(all.changes.map((c: any) => c.proposed_by))).toEqual(new Set(['rules-admin', 'rules-viewer', 'rules-admin-2']));
    expect(all.changes.map((c: any) => c.change_id)).toEqual([...all.changes.map((c: any) => c.change_id)].sort().reverse()); // newest first
    expect(all.changes[0]).not.toHaveProperty('proposed_content');
    for (const who of ['admin', 'viewer', 'otherAdmin'] as const) {
      const own = (await call(who, 'GET', '/api/settings/config-changes')).body.changes;
      expect(own.length).toBeGreaterThan(0);
      expect(own.every((c: any) => c.proposed_by === { admin: 'rules-admin', viewer: 'rules-viewer', otherAdmin: 'rules-admin-2' }[who])).toBe(true);
    }
    const pending = (await call('superadmin', 'GET', '/api/settings/config-changes?status_filter=pending')).body.changes;
    expect(pending.length).toBeGreaterThan(0);
    expect(pending.every((c: any) => c.status === 'pending')).toBe(true);
    expect((await call('superadmin', 'GET', '/api/settings/config-changes?status_filter=merged')).status).toBe(422);
    expect((await call('admin', 'GET', `/api/settings/config-changes/${mine}`)).status).toBe(404);
    expect((await call('viewer', 'GET', `/api/settings/config-changes/${mine}`)).status).toBe(404);
    expect((await call('otherAdmin', 'GET', `/api/settings/config-changes/${mine}`)).status).toBe(200);
  });
});

describe('version history', () => {
  it('lists every applied version newest first, a page at a time', async () => {
    const total = await version('health-rules');
    expect(total).toBeGreaterThanOrEqual(3);
    const page1 = (await call('viewer', 'GET', '/api/settings/health-rules/versions?page=1&page_size=2')).body;
    expect(page1).toMatchObject({ rule_set: 'health-rules', current_version: total, total, page: 1, page_size: 2 });
    expect(page1.versions.map((v: any) => v.version)).toEqual([total, total - 1]);
    const page2 = (await call('viewer', 'GET', '/api/settings/health-rules/versions?page=2&page_size=2')).body;
    expect(page2.versions.map((v: any) => v.version)).toEqual([total - 2, total - 3].filter((v) => v >= 1));
    expect(page1.versions[0]).not.toHaveProperty('parsed');
    expect((await call('viewer', 'GET', '/api/settings/issue-rules/versions?page=99')).body).toMatchObject({ page: 99, versions: [] });
    expect((await call('viewer', 'GET', '/api/settings/health-rules/versions?page_size=21')).status).toBe(422);
  });

  it('answers the shipped default (version 0, never stored) beside the versions, and putting it back restores it as the next version', async () => {
    const shipped = defaultRuleText('risk-rules');
    const edited = await call('superadmin', 'PUT', '/api/settings/risk-rules', { content: `# edited before going back\n${shipped}` });
    expect(edited.body).toMatchObject({ status: 'ok', applied: true });
    const page = (await call('viewer', 'GET', '/api/settings/risk-rules/versions')).body;
    expect(page.shipped_default).toBe(shipped);
    expect(page.versions.map((v: any) => v.version)).not.toContain(0);
    const restored = await call('superadmin', 'PUT', '/api/settings/risk-rules', { content: page.shipped_default });
    expect(restored.body).toMatchObject({ status: 'ok', applied: true, version: page.current_version + 1 });
    expect((await call('viewer', 'GET', '/api/settings/risk-rules')).body).toMatchObject({ content: shipped, version: page.current_version + 1 });
  });
});

describe('general settings', () => {
  it('answers the defaults, takes `rules` and `ai` from a superadmin with an audit of before and after, refuses anything else', async () => {
    expect((await call('viewer', 'GET', '/api/settings/general')).body).toEqual({ health_scoring_method: 'rules', alert_criticality_method: 'rules' });
    const put = await call('superadmin', 'PUT', '/api/settings/general', { health_scoring_method: 'ai', alert_criticality_method: 'rules' });
    expect(put).toEqual({ status: 200, body: { status: 'ok', health_scoring_method: 'ai', alert_criticality_method: 'rules' } });
    expect((await call('admin', 'GET', '/api/settings/general')).body).toEqual({ health_scoring_method: 'ai', alert_criticality_method: 'rules' });
    expect((await listAudit('settings_update'))[0]).toMatchObject({
      actor: 'rules-super',
      detail: { before: { health_scoring_method: 'rules' }, after: { health_scoring_method: 'ai' } },
    });
    for (const body of [{ health_scoring_method: 'magic', alert_criticality_method: 'rules' }, { health_scoring_method: 'rules' }, {}]) {
      expect((await call('superadmin', 'PUT', '/api/settings/general', body)).status).toBe(422);
    }
    expect((await call('admin', 'PUT', '/api/settings/general', { health_scoring_method: 'rules', alert_criticality_method: 'rules' })).status).toBe(403);
    expect((await call('viewer', 'GET', '/api/settings/general')).body.health_scoring_method).toBe('ai');
  });

  it('audits concurrent saves as one chain: each entry\'s "before" is what it replaced, the last one\'s "after" is what is stored', async () => {
    const states = [
      { health_scoring_method: 'rules', alert_criticality_method: 'rules' },
      { health_scoring_method: 'ai', alert_criticality_method: 'rules' },
      { health_scoring_method: 'rules', alert_criticality_method: 'ai' },
      { health_scoring_method: 'ai', alert_criticality_method: 'ai' },
    ] as const;
    const key = (state: object) => JSON.stringify(state, ['health_scoring_method', 'alert_criticality_method']);
    const start = (await call('viewer', 'GET', '/api/settings/general')).body;
    const audited = (await listAudit('settings_update')).length;
    // Three superadmins at once, each to a state none of the others saves and the start is not.
    const targets = states.filter((state) => key(state) !== key(start));
    const puts = await Promise.all(targets.map((state) => call('superadmin', 'PUT', '/api/settings/general', state)));
    expect(puts.map((put) => put.status)).toEqual([200, 200, 200]);
    const all = await listAudit('settings_update'); // newest first
    const entries = all.slice(0, all.length - audited);
    expect(entries).toHaveLength(3);
    // Walk the chain from the start: exactly one entry replaced each state it reached.
    let at = key(start);
    const left = entries.map((entry) => ({ before: key(entry.detail.before as object), after: key(entry.detail.after as object) }));
    while (left.length) {
      const next = left.filter((entry) => entry.before === at);
      expect(next, `entries replacing ${at}`).toHaveLength(1);
      left.splice(left.indexOf(next[0]!), 1);
      at = next[0]!.after;
    }
    expect(key((await call('viewer', 'GET', '/api/settings/general')).body)).toBe(at);
  });
});

describe('metric sources, a fourth rule set (issue 20 §1)', () => {
  const etagOf = async (path: string) => (await fetch(`${service.url}${path}`, { headers: { Authorization: `Bearer ${tokens.viewer}` } })).headers.get('ETag');

  it('is the shipped default until a version is stored: loadMetricSources() answers its parsed value as version 0', async () => {
    expect(await version('metric-sources')).toBe(0);
    const loaded = await loadMetricSources();
    expect(loaded).toMatchObject({ version: 0, content: null });
    expect(loaded.rules.prometheus).toMatchObject({ enabled: false, url: 'http://127.0.0.1:9090', auth: { type: 'none' } });
    expect(loaded.rules.metrics.map((m) => m.metric_key)).toContain('compaction_score');
    expect(loaded.rules.metrics.find((m) => m.metric_key === 'qps')).toMatchObject({ convert: 'none', scale: 1 }); // the schema's defaults
    expect(await etagOf('/api/settings/metric-sources')).toBe('"v0"');
    expect((await call('viewer', 'GET', '/api/settings/metric-sources/versions')).body).toMatchObject({
      rule_set: 'metric-sources',
      current_version: 0,
      total: 0,
      versions: [],
    });
  });

  it("a superadmin's PUT applies the next version, audited; loadMetricSources() then answers it", async () => {
    const before = await version('metric-sources');
    const content = metricSourcesWith(SHIPPED_URL, 'url: https://prometheus.example.com').replace(/enabled: false( +# true once)/, 'enabled: true$1');
    const put = await fetch(`${service.url}/api/settings/metric-sources`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${tokens.superadmin}`, 'Content-Type': 'application/json', 'If-Match': `"v${before}"` },
      body: JSON.stringify({ content }),
    });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ status: 'ok', applied: true, version: before + 1 });
    expect(put.headers.get('ETag')).toBe(`"v${before + 1}"`);
    expect((await call('viewer', 'GET', '/api/settings/metric-sources')).body).toMatchObject({ content, version: before + 1, updated_by: 'rules-super' });
    expect(await etagOf('/api/settings/metric-sources')).toBe(`"v${before + 1}"`);
    const loaded = await loadMetricSources();
    expect(loaded).toMatchObject({ version: before + 1, content });
    expect(loaded.rules.prometheus).toMatchObject({ enabled: true, url: 'https://prometheus.example.com' });
    expect((await listAudit('rules_update'))[0]).toMatchObject({
      actor: 'rules-super',
      target: 'metric-sources',
      detail: { rule_set: 'metric-sources', version: before + 1, based_on: before },
    });
    // Based on a version no longer current: 409, nothing changes.
    const stale = await call('superadmin', 'PUT', '/api/settings/metric-sources', { content: `# again\n${content}`, base_version: before });
    expect(stale).toMatchObject({ status: 409, body: { current_version: before + 1, base_version: before } });
    expect(await version('metric-sources')).toBe(before + 1);
  });

  it("an admin's PUT is a proposal without impact; a superadmin's approval applies it, and loadMetricSources() answers it", async () => {
    const base = await version('metric-sources');
    const live = (await call('admin', 'GET', '/api/settings/metric-sources')).body.content as string;
    const content = live.replace('step_seconds: 60 ', 'step_seconds: 300').replace('backfill_days: 7 ', 'backfill_days: 3 ');
    expect(content).not.toBe(live);
    const proposal = await call('admin', 'PUT', '/api/settings/metric-sources', { content });
    expect(proposal.body).toMatchObject({ status: 'pending', applied: false, base_version: base });
    expect(await version('metric-sources')).toBe(base);
    expect((await loadMetricSources()).rules.prometheus.step_seconds).toBe(60);
    const id = proposal.body.change_id as string;
    expect((await call('admin', 'GET', `/api/settings/config-changes/${id}`)).body).toMatchObject({
      rule_set: 'metric-sources',
      status: 'pending',
      proposed_by: 'rules-admin',
      current_content: live,
      proposed_content: content,
      stale: false,
      impact: null,
    });
    expect((await call('superadmin', 'GET', '/api/settings/config-changes?status_filter=pending')).body.changes).toEqual(
      expect.arrayContaining([expect.objectContaining({ change_id: id, rule_set: 'metric-sources' })]),
    );
    expect((await call('admin', 'POST', `/api/settings/config-changes/${id}/review`, { action: 'approve', note: '' })).status).toBe(403);

    const review = await call('superadmin', 'POST', `/api/settings/config-changes/${id}/review`, { action: 'approve', note: 'slower pulls' });
    expect(review).toEqual({ status: 200, body: { status: 'approved', change_id: id, applied: true, version: base + 1 } });
    const loaded = await loadMetricSources();
    expect(loaded).toMatchObject({ version: base + 1, content });
    expect(loaded.rules.prometheus).toMatchObject({ step_seconds: 300, backfill_days: 3 });
    const newest = (await call('viewer', 'GET', '/api/settings/metric-sources/versions')).body;
    expect(newest).toMatchObject({ rule_set: 'metric-sources', current_version: base + 1, total: base + 1 });
    expect(newest.versions[0]).toMatchObject({ version: base + 1, content, change_id: id, proposed_by: 'rules-admin', updated_by: 'rules-super' });
    expect((await listAudit('change_approve'))[0]).toMatchObject({
      target: id,
      detail: { rule_set: 'metric-sources', version: base + 1, proposed_by: 'rules-admin', note: 'slower pulls' },
    });
    // Decided, it still shows what it changed: its base is the version it was made on, not the live one (now its own).
    expect((await call('admin', 'GET', `/api/settings/config-changes/${id}`)).body).toMatchObject({
      status: 'approved',
      base_version: base,
      base_content: live,
      current_content: content,
      proposed_content: content,
    });
  });

  it("a stale proposal's base is the text it was made on, not the later version that made it stale", async () => {
    const base = await version('metric-sources');
    const live = (await call('admin', 'GET', '/api/settings/metric-sources')).body.content as string;
    const proposed = `# an admin's change\n${live}`;
    const id = (await call('admin', 'PUT', '/api/settings/metric-sources', { content: proposed })).body.change_id as string;
    const later = `# a superadmin's change\n${live}`;
    expect((await call('superadmin', 'PUT', '/api/settings/metric-sources', { content: later, base_version: base })).status).toBe(200);
    expect((await call('admin', 'GET', `/api/settings/config-changes/${id}`)).body).toMatchObject({
      status: 'pending',
      stale: true,
      base_version: base,
      base_content: live,
      current_version: base + 1,
      current_content: later,
    });
  });
});

describe('pending proposals per user (PENDING_PER_PROPOSER)', () => {
  /** A PUT of the health rules by `token` (a user of its own, so the bound is this test's alone). */
  const propose = async (token: string, warning: number) => {
    const res = await fetch(`${service.url}/api/settings/health-rules`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ content: await healthRulesWith((r) => (r.scoring.classification.warning = warning)) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const pendingOf = async (token: string) => {
    const res = await fetch(`${service.url}/api/settings/config-changes?status_filter=pending`, { headers: { Authorization: `Bearer ${token}` } });
    return ((await res.json()) as any).total as number;
  };

  it(`a user holds at most ${PENDING_PER_PROPOSER} pending: the next is a 409 that writes nothing, and a review frees a place`, async () => {
    const token = await userToken('viewer', 'rules-flooder');
    const ids: string[] = [];
    for (let i = 0; i < PENDING_PER_PROPOSER; i++) {
      const made = await propose(token, 30 + i);
      expect(made.status).toBe(200);
      ids.push(made.body.change_id);
    }
    const audits = await actionsInAudit('change_propose');
    const refused = await propose(token, 50);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain(`already has ${PENDING_PER_PROPOSER} proposals waiting for review`);
    expect(await pendingOf(token)).toBe(PENDING_PER_PROPOSER);
    expect(await actionsInAudit('change_propose')).toBe(audits);
    // Rejecting one (approving would do the same) lets the user propose once more, and only once.
    expect((await call('superadmin', 'POST', `/api/settings/config-changes/${ids[0]}/review`, { action: 'reject', note: 'one at a time' })).status).toBe(200);
    expect((await propose(token, 51)).status).toBe(200);
    expect((await propose(token, 52)).status).toBe(409);
    expect(await pendingOf(token)).toBe(PENDING_PER_PROPOSER);
  });

  it('its proposer withdraws a pending proposal: withdrawn, audited, its place freed; nobody else may, and it cannot be reviewed after', async () => {
    const token = await userToken('viewer', 'rules-withdrawer');
    const ids: string[] = [];
    for (let i = 0; i < PENDING_PER_PROPOSER; i++) ids.push((await propose(token, 60 + i)).body.change_id);
    expect((await propose(token, 70)).status).toBe(409);
    const withdraw = async (who: string, id = ids[0]!) => {
      const res = await fetch(`${service.url}/api/settings/config-changes/${id}/withdraw`, { method: 'POST', headers: { Authorization: `Bearer ${who}` } });
      return { status: res.status, body: (await res.json()) as any };
    };
    const before = await getCurrentRuleSet('health-rules');
    // Another admin does not see it (404); a superadmin sees it, and rejects it rather than withdraw it (403).
    expect((await withdraw(tokens.otherAdmin)).status).toBe(404);
    const bySuper = await withdraw(tokens.superadmin);
    expect(bySuper.status).toBe(403);
    expect(bySuper.body.detail).toContain('rules-withdrawer');

    const audits = await actionsInAudit('change_withdraw');
    expect(await withdraw(token)).toEqual({ status: 200, body: { status: 'withdrawn', change_id: ids[0] } });
    expect(await actionsInAudit('change_withdraw')).toBe(audits + 1);
    expect((await listAudit('change_withdraw'))[0]).toMatchObject({ actor: 'rules-withdrawer', target: ids[0], detail: { rule_set: 'health-rules' } });
    const detail = (await call('superadmin', 'GET', `/api/settings/config-changes/${ids[0]}`)).body;
    expect(detail).toMatchObject({ status: 'withdrawn', reviewed_by: 'rules-withdrawer', applied_version: null, impact: null, stale: false });
    expect(await getCurrentRuleSet('health-rules')).toEqual(before);

    // Closed: neither withdrawn again nor reviewed; the status filter finds it.
    expect((await withdraw(token)).status).toBe(409);
    const review = await call('superadmin', 'POST', `/api/settings/config-changes/${ids[0]}/review`, { action: 'approve', note: '' });
    expect(review.status).toBe(409);
    expect(review.body.detail).toMatch(/reviewed or withdrawn already/);
    // Who closed it and when, in words a reader takes in (the field keeps the stored instant).
    expect(review.body.detail).toMatch(/\(withdrawn by rules-withdrawer at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\)/);
    expect(review.body.reviewed_at).toBe(detail.reviewed_at);
    const withdrawn = await fetch(`${service.url}/api/settings/config-changes?status_filter=withdrawn`, { headers: { Authorization: `Bearer ${token}` } });
    expect(((await withdrawn.json()) as any).changes.map((c: { change_id: string }) => c.change_id)).toEqual([ids[0]]);
    // Its place is free again: one more proposal, and only one.
    expect((await propose(token, 71)).status).toBe(200);
    expect((await propose(token, 72)).status).toBe(409);
  });

  it('concurrent proposals by one user never hold more than the bound', async () => {
    const token = await userToken('viewer', 'rules-racer');
    const answers = await Promise.all(Array.from({ length: PENDING_PER_PROPOSER + 6 }, (_, i) => propose(token, 30 + i)));
    const made = answers.filter((a) => a.status === 200).length;
    expect(answers.every((a) => a.status === 200 || a.status === 409)).toBe(true);
    expect(made).toBeGreaterThan(0);
    expect(made).toBeLessThanOrEqual(PENDING_PER_PROPOSER);
    expect(await pendingOf(token)).toBe(made);
  });

  it('a proposal stored before the bound existed (held by no one) is reviewed as before', async () => {
    const changeId = `20260101T000000000Z-0000beef`;
    await putItem('rules', {
      pk: 'CHANGES',
      sk: changeId,
      change_id: changeId,
      rule_set: 'health-rules',
      status: 'pending',
      proposed_by: 'rules-legacy',
      proposed_at: '2026-01-01T00:00:00.000Z',
      base_version: 0,
      proposed_content: defaultRuleText('health-rules'),
      reviewed_by: null,
      reviewed_at: null,
      review_note: null,
      applied_version: null,
    });
    const review = await call('superadmin', 'POST', `/api/settings/config-changes/${changeId}/review`, { action: 'reject', note: 'old' });
    expect(review.status).toBe(200);
    expect(review.body).toMatchObject({ status: 'rejected', applied: false });
  });
});
