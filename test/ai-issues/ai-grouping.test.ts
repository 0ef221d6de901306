// AI grouping (issue 10) against DynamoDB Local and a local OpenAI-compatible
// server: every alert lands in exactly one AI issue, even when the model omits
// or repeats alerts; rules without a provider; the debounce; triage survives.
import { DATA_NOT_INSTRUCTIONS } from '../../shared/llm/tool-loop.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as recompute } from '../../functions/recompute.js';
import { loadDemoFleet } from '../../infra/local/demo-fleet.js';
import { aiTriageAction, getAiGroupingState, getAiIssue, listAiIssuesActiveSince } from '../../shared/db/ai-issues.js';
import { listAlertsSince, recordAlerts, type AlertRecord } from '../../shared/db/alerts.js';
import { alertRecord, storedCluster } from '../support/clusters.js';
import { transactWrite } from '../../shared/db/client.js';
import { listUsage } from '../../shared/db/llm-usage.js';
import { withAgentBudgetSpent } from '../support/agent-budget.js';
import { categoryOf, rulesGroups } from '../../shared/ai-issues/grouping.js';
import { AI_WINDOW_DAYS, alertKeyOf, MODEL_RETRY_BASE_MS, modelWait, regroupAiClusters } from '../../shared/ai-issues/regroup.js';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy, Watcher } from '../support/dynamo-proxy.js';

let openai: FakeOpenAi;
let proxy: DynamoProxy;
beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  await loadDemoFleet(10);
  openai = await startFakeOpenAi();
});
afterAll(async () => {
  for (const v of ['LLM_PROVIDER', 'LLM_MODEL', 'LLM_BASE_URL', 'LLM_MAX_ATTEMPTS', 'LLM_RETRY_BASE_MS']) delete process.env[v];
  await openai?.close();
});

const windowAlerts = async () => listAlertsSince(new Date(Date.now() - AI_WINDOW_DAYS * 86_400_000));
const byCluster = (alerts: AlertRecord[]) => {
  const m = new Map<string, AlertRecord[]>();
  for (const a of alerts) m.set(a.cluster_id, [...(m.get(a.cluster_id) ?? []), a]);
  return m;
};

/** Every alert of the window is in exactly one stored AI issue. */
async function expectEveryAlertOnce() {
  const alerts = await windowAlerts();
  const issues = await listAiIssuesActiveSince(new Date(Date.now() - 60 * 86_400_000));
  const linked = issues.flatMap((i) => i.alert_keys.map((k) => `${i.cluster_id}|${k}`));
  expect(new Set(linked).size).toBe(linked.length); // never twice
  expect(new Set(linked)).toEqual(new Set(alerts.map((a) => `${a.cluster_id}|${alertKeyOf(a)}`))); // never lost
  return issues;
}

describe('rules grouping (no provider)', () => {
  it('groups by metric category within a time gap, and says it is rule-based', () => {
    const a = (name: string, minutesAgo: number) =>
      ({
        alert_name: name,
        starts_at: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
        fingerprint: name + minutesAgo,
        severity: 'warning',
        status: 'Resolved',
        labels: {},
        detail: '',
        summary: '',
      }) as unknown as AlertRecord;
    const groups = rulesGroups([a('DiskUsageHigh', 300), a('DiskFull', 250), a('JvmHeapPressure', 240), a('DiskUsageHigh', 10)]);
    expect(groups.map((g) => g.alerts.length)).toEqual([2, 1, 1]);
    expect(groups[0]!.reasoning).toMatch(/^Rule-based grouping \(no LLM provider configured\): 2 storage alerts/);
    expect(categoryOf('CompactionScoreHigh')).toBe('compaction');
  });

  it('rates an alert as the issue rules do, name patterns first: DiskFullSoon labelled warning is a Critical AI issue, as its rule issue is', async () => {
    delete process.env.LLM_PROVIDER;
    const clusterId = await storedCluster();
    await recordAlerts([
      { ...alertRecord(new Date(), clusterId, 'DiskFullSoon', 30, null, `fp-${clusterId}`), labels: { alertname: 'DiskFullSoon', severity: 'warning' } },
    ]);
    expect(await regroupAiClusters([clusterId])).toMatchObject({ regrouped: 1, failed: 0 });
    const issues = (await listAiIssuesActiveSince(new Date(Date.now() - 86_400_000))).filter((i) => i.cluster_id === clusterId);
    expect(issues.map((i) => [i.issue_name, i.severity])).toEqual([['Storage: DiskFullSoon', 'Critical']]);
  });

  it('the scheduled recompute creates AI issues covering every alert exactly once, and a second run changes nothing', async () => {
    delete process.env.LLM_PROVIDER;
    const first = await recompute();
    expect(first.ai_issues).toMatchObject({ failed: 0 });
    expect(first.ai_issues!.regrouped).toBeGreaterThan(0);
    const issues = await expectEveryAlertOnce();
    expect(issues.every((i) => i.grouped_by === 'rules' && i.ai_reasoning.startsWith('Rule-based grouping'))).toBe(true);
    const second = await recompute();
    expect(second.ai_issues).toMatchObject({ regrouped: 0, failed: 0 });
  });
});

describe('LLM grouping', () => {
  it('repairs an answer that omits and repeats alerts, keeps triage, and records agent usage', async () => {
    Object.assign(process.env, {
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'gpt-4o-mini',
      LLM_BASE_URL: openai.baseUrl,
      LLM_MAX_ATTEMPTS: '1',
      LLM_RETRY_BASE_MS: '1',
    });
    const clusters = byCluster(await windowAlerts());
    const [clusterId, alerts] = [...clusters].find(([, list]) => list.length >= 3)!;
    const before = (await listAiIssuesActiveSince(new Date(Date.now() - 60 * 86_400_000))).filter((i) => i.cluster_id === clusterId);
    const triaged = before[0]!;
    await transactWrite([aiTriageAction(triaged.issue_id, { notes: 'keep' }, triaged.triage_version, 'tester')]);
    // a1 and a2 together, a2 again (repeated), a9999 unknown, the rest omitted
    openai.enqueueText(
      JSON.stringify({
        groups: [
          { alerts: ['a1', 'a2'], title: 'Storage pressure', severity: 'Critical', reasoning: 'Both point at the disks.', summary: 'Disks are filling.' },
          { alerts: ['a2', 'a9999'], title: 'Echo', severity: 'Warning', reasoning: 'Repeated.', summary: 'x' },
        ],
      }),
      { usage: { input_tokens: 800, output_tokens: 120 } },
    );
    const usageBefore = (await listUsage(1)).length;
    const result = await regroupAiClusters([clusterId]);
    expect(result).toMatchObject({ regrouped: 1, failed: 0 });
    const after = (await listAiIssuesActiveSince(new Date(Date.now() - 60 * 86_400_000))).filter((i) => i.cluster_id === clusterId);
    expect(after.find((i) => i.issue_name === 'Storage pressure')).toMatchObject({
      alert_count: 2,
      grouped_by: 'llm:gpt-4o-mini',
      ai_reasoning: 'Both point at the disks.',
    });
    expect(after.some((i) => i.issue_name === 'Echo')).toBe(false); // nothing left for it after the repair
    expect(after.filter((i) => i.ai_reasoning.startsWith('The model left these alerts out')).reduce((n, i) => n + i.alert_count, 0)).toBe(alerts.length - 2);
    await expectEveryAlertOnce();
    // a triaged issue is never deleted: it continues a new group, or is kept as superseded history
    const kept = (await getAiIssue(triaged.issue_id))!;
    expect(kept.notes).toBe('keep');
    if (kept.superseded_by) expect(kept).toMatchObject({ status: 'Resolved', alert_keys: [] });
    else expect(kept.alert_count).toBeGreaterThan(0);
    const usage = (await listUsage(1)).slice(usageBefore);
    expect(usage.map((u) => [u.source, u.input_tokens, u.output_tokens])).toEqual([['agent', 800, 120]]);
    // unchanged alerts: no second LLM call
    expect(await regroupAiClusters([clusterId])).toMatchObject({ unchanged: 1 });
    expect(openai.answered()).toHaveLength(1);
    // Alert texts are others' words: the model is told not to follow them.
    expect(openai.answered()[0]!.body.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining(DATA_NOT_INSTRUCTIONS) });
  });

  it('defers clusters past the pass budget to the next pass', async () => {
    const [clusterId] = [...byCluster(await windowAlerts()).keys()];
    expect(await regroupAiClusters([clusterId!], new Date(), -1)).toMatchObject({ deferred: 1, regrouped: 0, unchanged: 0 });
  });

  it('falls back to rules when the model fails, still covering every alert; the model is asked again once its wait is over, not every pass', async () => {
    const clusters = byCluster(await windowAlerts());
    const [clusterId, alerts] = [...clusters].find(([, list]) => list.length >= 1)!;
    process.env.LLM_MODEL = 'gpt-4o'; // a new method: the cluster is regrouped
    const calls = openai.answered().length;
    const now = new Date();
    openai.enqueueError(500);
    expect(await regroupAiClusters([clusterId], now)).toMatchObject({ regrouped: 1, failed: 0 });
    await expectEveryAlertOnce();
    const ofCluster = async () =>
      (await listAiIssuesActiveSince(new Date(Date.now() - 60 * 86_400_000))).filter((i) => i.cluster_id === clusterId && i.alert_count > 0);
    expect((await ofCluster()).every((i) => i.grouped_by === 'rules')).toBe(true);
    expect(await getAiGroupingState(clusterId)).toMatchObject({
      method: 'rules',
      model_failed_at: now.toISOString(),
      model_failures: 1,
      model_failed_with: 'llm:gpt-4o',
    });
    // The same alerts, the next passes within the wait: the model is not asked (each ask is paid for).
    const later = (ms: number) => new Date(now.getTime() + ms);
    expect(await regroupAiClusters([clusterId], later(15 * 60_000))).toMatchObject({ unchanged: 1 });
    expect(openai.answered()).toHaveLength(calls + 1);
    // Its wait over, the model is asked again; grouping by it clears the failures.
    const all = alerts.map((_, i) => `a${i + 1}`);
    openai.enqueueText(JSON.stringify({ groups: [{ alerts: all, title: 'Regrouped', severity: 'Warning', reasoning: 'r', summary: 's' }] }));
    expect(await regroupAiClusters([clusterId], later(MODEL_RETRY_BASE_MS + 60_000))).toMatchObject({ regrouped: 1, failed: 0 });
    expect(openai.answered()).toHaveLength(calls + 2);
    expect((await ofCluster()).map((i) => [i.issue_name, i.grouped_by, i.alert_count])).toEqual([['Regrouped', 'llm:gpt-4o', alerts.length]]);
    expect(await getAiGroupingState(clusterId)).not.toHaveProperty('model_failures');
    expect(await regroupAiClusters([clusterId], later(MODEL_RETRY_BASE_MS + 120_000))).toMatchObject({ unchanged: 1 });
    expect(openai.answered()).toHaveLength(calls + 2);
  });

  it("once the day's AI budget is spent: moved alerts are grouped by rules, saying why; a model's grouping whose alerts did not move stays", async () => {
    process.env.LLM_MODEL = 'gpt-4o-mini';
    const clusterId = await storedCluster();
    const now = new Date();
    await recordAlerts([alertRecord(now, clusterId, 'DiskUsageHigh', 60, null, `budget-a-${clusterId}`)]);
    openai.enqueueText(JSON.stringify({ groups: [{ alerts: ['a1'], title: 'Disks', severity: 'Warning', reasoning: 'r', summary: 's' }] }));
    expect(await regroupAiClusters([clusterId], now)).toMatchObject({ regrouped: 1 });
    const ofCluster = async () =>
      (await listAiIssuesActiveSince(new Date(Date.now() - 86_400_000))).filter((i) => i.cluster_id === clusterId && i.alert_count > 0);
    expect((await ofCluster()).map((i) => i.grouped_by)).toEqual(['llm:gpt-4o-mini']);
    const calls = openai.answered().length;
    await withAgentBudgetSpent(async () => {
      // Even under another model (a new method), alerts that did not move keep the model's grouping.
      process.env.LLM_MODEL = 'gpt-4o';
      expect(await regroupAiClusters([clusterId], now)).toMatchObject({ unchanged: 1 });
      expect((await ofCluster()).map((i) => i.grouped_by)).toEqual(['llm:gpt-4o-mini']);
      // A new alert: grouped by the rules, which say why; the model is not asked.
      await recordAlerts([alertRecord(now, clusterId, 'CpuHigh', 5, null, `budget-b-${clusterId}`)]);
      expect(await regroupAiClusters([clusterId], now)).toMatchObject({ regrouped: 1 });
      const grouped = await ofCluster();
      expect(grouped.every((i) => i.grouped_by === 'rules')).toBe(true);
      expect(grouped[0]!.ai_reasoning).toMatch(
        /^Rule-based grouping \(the day's AI budget is spent \(US\$[\d.]+ of AGENT_DAILY_BUDGET_USD's US\$[\d.]+; the model is asked again after 00:00 UTC\)\)/,
      );
      expect(openai.answered()).toHaveLength(calls);
      await expectEveryAlertOnce();
    });
  });

  it('waits twice as long after each failure in a row, up to 12 hours', () => {
    expect([1, 2, 3, 5, 6, 100].map((n) => modelWait(n) / 60_000)).toEqual([30, 60, 120, 480, 720, 720]);
  });

  it('a run that stops half-way leaves nothing the next pass does not replace or retire', async () => {
    const [clusterId, alerts] = [...byCluster(await windowAlerts())].find(([, list]) => list.length >= 3)!;
    const every = alerts.map((_, i) => `a${i + 1}`);
    const group = (ids: string[], title: string) => ({ alerts: ids, title, severity: 'Warning', reasoning: 'r', summary: 's' });
    // First every alert in one issue; then a new model (so the cluster is regrouped) splits them.
    process.env.LLM_MODEL = 'gpt-4.1-mini';
    openai.enqueueText(JSON.stringify({ groups: [group(every, 'Together')] }));
    expect(await regroupAiClusters([clusterId])).toMatchObject({ regrouped: 1 });
    process.env.LLM_MODEL = 'gpt-4.1';
    // DynamoDB refusing the run's final record of the cluster's grouping, once: its issues are written by then.
    let refuse = true;
    const refuseFinalState: Watcher = ({ input }) => {
      if (!refuse || !input.Item?.fingerprint || !/ai-issues/.test(String(input.TableName))) return undefined;
      refuse = false;
      return { type: 'AccessDeniedException', message: 'the table refused the write' };
    };
    const stopRefusing = proxy.watch(refuseFinalState);
    try {
      // One issue per alert: all but one of them new.
      openai.enqueueText(JSON.stringify({ groups: every.map((a) => group([a], `Alert ${a}`)) }));
      expect(await regroupAiClusters([clusterId])).toMatchObject({ regrouped: 0, failed: 1 });
    } finally {
      stopRefusing();
    }
    // The next pass groups every alert together: the half-written run's issues are replaced or retired.
    openai.enqueueText(JSON.stringify({ groups: [group(every, 'All of it')] }));
    expect(await regroupAiClusters([clusterId])).toMatchObject({ regrouped: 1, failed: 0 });
    const issues = await expectEveryAlertOnce();
    expect(issues.filter((i) => i.cluster_id === clusterId && i.alert_count > 0).map((i) => [i.issue_name, i.alert_count])).toEqual([
      ['All of it', alerts.length],
    ]);
    expect(await regroupAiClusters([clusterId])).toMatchObject({ unchanged: 1 });
  });
});
