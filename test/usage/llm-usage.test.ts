// The LLM usage ledger and its reports against DynamoDB Local: every figure
// checked against a brute-force sum over the recorded calls, and what a report reads.
import { beforeAll, describe, expect, it } from 'vitest';
import { getItem, putItem } from '../../shared/db/client.js';
import {
  addChatSpend,
  claimChatTurn,
  releaseChatTurn,
  chatSpend,
  KeptDays,
  listUsage,
  recordUsage,
  USAGE_DAY_CLOSED_AFTER_MS,
  usageItem,
  usageRecord,
  type NewUsage,
  type UsageRecord,
} from '../../shared/db/llm-usage.js';
import { costOf, forgetPricing, priceOf, pricingTable } from '../../shared/llm/pricing.js';
import { llmProvider } from '../../shared/llm/provider.js';
import { recordedCall } from '../../shared/llm/tool-loop.js';
import { projectionDays, usageByModel, usageSummary } from '../../shared/llm/usage.js';
import { useTestTables } from '../support/dynamo.js';
import { requestsOf, tableOf, type DynamoProxy } from '../support/dynamo-proxy.js';
import { startFakeOpenAi } from '../support/fake-openai.js';

const NOW = new Date('2026-11-20T12:00:00Z');
const recorded: UsageRecord[] = [];
let proxy: DynamoProxy;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  // 60 calls over 40 days: two sources, three models, runs of 1-3 calls, some errors.
  let seed = 7;
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  for (let run = 0; run < 25; run++) {
    const daysAgo = Math.floor(random() * 40);
    const source = run % 3 === 0 ? 'agent' : 'chat';
    const model = ['gpt-4o-mini', 'anthropic.claude-3-5-haiku-20241022-v1:0', 'unpriced-model'][run % 3]!;
    for (let call = 0, calls = 1 + (run % 3); call < calls; call++) {
      const input = Math.floor(random() * 5000) + 100;
      const output = Math.floor(random() * 800) + 10;
      const usage: NewUsage = {
        run_id: `run-${run}`,
        source,
        model,
        input_tokens: input,
        output_tokens: output,
        total_tokens: input + output,
        cost_usd: costOf(priceOf(await pricingTable(), model), input, output),
        duration_ms: 200 + call * 50,
        error: run % 7 === 0 && call === calls - 1,
        user: 'u',
      };
      recorded.push(await recordUsage(usage, new Date(NOW.getTime() - daysAgo * 86_400_000 - call * 1000)));
    }
  }
});

const inPeriod = (days: number) => {
  const first = new Date(NOW.getTime() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  return recorded.filter((r) => r.day >= first);
};
const sumOf = (rows: UsageRecord[], f: (r: UsageRecord) => number) => rows.reduce((s, r) => s + f(r), 0);

describe('prices', () => {
  it('costs a call exactly: tokens × price per million, and nothing for an unpriced model', async () => {
    const rows = await pricingTable();
    expect(costOf(priceOf(rows, 'gpt-4o-mini'), 1_000_000, 1_000_000)).toBe(0.75);
    expect(costOf(priceOf(rows, 'gpt-4o-mini'), 1234, 567)).toBe(Math.round(1234 * 0.15 + 567 * 0.6) / 1e6);
    expect(priceOf(rows, 'us.anthropic.claude-3-5-haiku-20241022-v1:0')?.model).toBe('anthropic.claude-3-5-haiku-20241022-v1:0');
    expect(priceOf(rows, 'gpt-4o-mini-2024-07-18')?.model).toBe('gpt-4o-mini'); // a dated snapshot
    // A snapshot priced apart from its model: its own row, at twice gpt-4o's input price and no cache rate.
    expect(priceOf(rows, 'gpt-4o-2024-08-06')?.model).toBe('gpt-4o');
    expect(costOf(priceOf(rows, 'gpt-4o-2024-05-13'), 1_000_000, 1_000_000, { cached_input_tokens: 500_000 })).toBe(20);
    expect(priceOf(rows, 'gpt-4.1-nano')?.model).toBe('gpt-4.1-nano'); // its own row, not gpt-4.1's
    expect(priceOf(rows, 'gpt-5-pro')).toBeUndefined(); // not gpt-5: unpriced, and listed so
    // Today's models are priced: their calls count against the chat budget (a $0 call never would).
    expect(priceOf(rows, 'gpt-5-2025-08-07')?.model).toBe('gpt-5');
    expect(costOf(priceOf(rows, 'o4-mini-2025-04-16'), 1_000_000, 1_000_000, { cached_input_tokens: 1_000_000 })).toBe(4.675); // all input cached at 0.275, output 4.40
    expect(priceOf(rows, 'global.anthropic.claude-haiku-4-5-20251001-v1:0')?.model).toBe('anthropic.claude-haiku-4-5-20251001-v1:0');
    // A geographic profile of Sonnet 4.5 costs 10% more than the global one; others find the global price.
    expect(priceOf(rows, 'global.anthropic.claude-sonnet-4-5-20250929-v1:0')?.output_per_mtok).toBe(15);
    expect(priceOf(rows, 'us.anthropic.claude-sonnet-4-5-20250929-v1:0')?.output_per_mtok).toBe(16.5);
    expect(priceOf(rows, 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0')?.output_per_mtok).toBe(16.5);
    expect(priceOf(rows, 'gpt-5.1-2025-11-13')?.model).toBe('gpt-5.1');
    expect(priceOf(rows, 'eu.amazon.nova-pro-v1:0')?.model).toBe('amazon.nova-pro-v1:0');
    // Models the stack accepts (and grants) by ARN, or under the au./ap. geographies.
    const haiku = 'anthropic.claude-3-5-haiku-20241022-v1:0';
    expect(priceOf(rows, `arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.${haiku}`)?.model).toBe(haiku);
    expect(priceOf(rows, `arn:aws:bedrock:us-east-1::foundation-model/${haiku}`)?.model).toBe(haiku);
    expect(priceOf(rows, `au.${haiku}`)?.model).toBe(haiku);
    expect(priceOf(rows, 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123')).toBeUndefined(); // names no model
    expect(costOf(priceOf(rows, 'unpriced-model'), 1000, 1000)).toBe(0);
  });

  it('LLM_PRICING replaces and adds rows', async () => {
    forgetPricing();
    const rows = await pricingTable({
      LLM_PRICING: JSON.stringify([
        { model: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
        { model: 'local-llama', input_per_mtok: 0, output_per_mtok: 0 },
      ]),
    });
    expect(priceOf(rows, 'gpt-4o-mini')).toEqual({ model: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 });
    expect(priceOf(rows, 'local-llama')).toBeDefined();
    forgetPricing();
    await expect(pricingTable({ LLM_PRICING: '[{"model":"x"}]' })).rejects.toThrow();
    forgetPricing();
    expect(priceOf(await pricingTable({}), 'gpt-4o-mini')?.input_per_mtok).toBe(0.15);
  });
});

describe('cached prompt tokens', () => {
  // A chat message resends the same prefix up to 13 times: those prompt tokens are billed at the cached rate.
  const row = { model: 'cached-model', input_per_mtok: 2.5, output_per_mtok: 10, cached_input_per_mtok: 1.25, cache_write_input_per_mtok: 3.125 };

  it("are priced at the row's cache rates, the rest of input_tokens (which includes them) at the input rate", () => {
    expect(costOf(row, 10_000, 500, { cached_input_tokens: 8_000 })).toBe(Math.round(2_000 * 2.5 + 8_000 * 1.25 + 500 * 10) / 1e6);
    expect(costOf(row, 10_000, 500, { cached_input_tokens: 6_000, cache_write_input_tokens: 3_000 })).toBe(
      Math.round(1_000 * 2.5 + 6_000 * 1.25 + 3_000 * 3.125 + 500 * 10) / 1e6,
    );
    expect(costOf(row, 10_000, 500, { cached_input_tokens: 8_000 })).toBeLessThan(costOf(row, 10_000, 500));
  });

  it('are priced as input where the row has no cache rate', async () => {
    const { cached_input_per_mtok: _read, cache_write_input_per_mtok: _write, ...plain } = row;
    expect(costOf(plain, 10_000, 500, { cached_input_tokens: 8_000, cache_write_input_tokens: 1_000 })).toBe(costOf(plain, 10_000, 500));
    expect(costOf(plain, 10_000, 500, { cached_input_tokens: 8_000 })).toBe(Math.round(10_000 * 2.5 + 500 * 10) / 1e6);
    // A shipped row without cache rates (Claude 3 Haiku): a cached call costs what it did; one with them costs less.
    const haiku = priceOf(await pricingTable(), 'anthropic.claude-3-haiku-20240307-v1:0');
    expect(costOf(haiku, 2006, 300, { cached_input_tokens: 1920 })).toBe(costOf(haiku, 2006, 300));
    const mini = priceOf(await pricingTable(), 'gpt-4o-mini');
    expect(costOf(mini, 2006, 300, { cached_input_tokens: 1920 })).toBeLessThan(costOf(mini, 2006, 300));
  });

  it('LLM_PRICING sets the cache rates', async () => {
    forgetPricing();
    const rows = await pricingTable({ LLM_PRICING: JSON.stringify([{ ...row, model: 'gpt-4o-mini' }]) });
    expect(priceOf(rows, 'gpt-4o-mini-2024-07-18')).toEqual({ ...row, model: 'gpt-4o-mini' });
    forgetPricing();
  });

  it("are kept in the call's ledger record; a record put before they were counted reads 0", async () => {
    const at = new Date('2024-03-01T10:00:00Z'); // a day of its own, outside every report window above
    const call: NewUsage = {
      run_id: 'cached-run',
      source: 'chat',
      model: 'gpt-4o-mini',
      input_tokens: 2006,
      output_tokens: 300,
      total_tokens: 2306,
      cost_usd: 0.0005,
      duration_ms: 300,
      error: false,
      user: 'u',
    };
    await recordUsage({ ...call, cached_input_tokens: 1920, cache_write_input_tokens: 64 }, at);
    const { cached_input_tokens: _read, cache_write_input_tokens: _write, ...older } = usageRecord({ ...call, run_id: 'older-run' }, at);
    await putItem('llm-usage', usageItem(older as UsageRecord));
    const ledger = await listUsage(1, at);
    expect(ledger.map((c) => [c.run_id, c.cached_input_tokens, c.cache_write_input_tokens]).sort()).toEqual([
      ['cached-run', 1920, 64],
      ['older-run', 0, 0],
    ]);
  });
});

describe('retention', () => {
  it('a call expires 400 days after it, as other history; a day of chat spend a week after that day', async () => {
    const at = new Date('2024-04-02T09:30:00Z'); // a day of its own, outside every report window above
    const record = await recordUsage(
      {
        run_id: 'kept-run',
        source: 'chat',
        model: 'gpt-4o-mini',
        input_tokens: 10,
        output_tokens: 2,
        total_tokens: 12,
        cost_usd: 0.0001,
        duration_ms: 5,
        error: false,
        user: 'u',
      },
      at,
    );
    const stored = await getItem('llm-usage', { pk: `DAY#${record.day}`, sk: `${record.at}#${record.call_id}` }, true);
    expect(stored?.ttl).toBe(at.getTime() / 1000 + 400 * 86_400);
    await addChatSpend('kept-user', '2024-04-02', 0.25);
    await addChatSpend('kept-user', '2024-04-02', 0.5);
    const spend = await getItem('llm-usage', { pk: 'CHAT_SPEND#2024-04-02', sk: 'USER#kept-user' }, true);
    expect(spend).toMatchObject({ cost_usd: 0.75, ttl: Date.parse('2024-04-10T00:00:00Z') / 1000 });
    expect(await chatSpend('kept-user', '2024-04-02')).toBe(0.75);
  });

  it("claims a person's chat turn in one conditional write: one at a time, under the budget, a lapsed claim taken over", async () => {
    const day = '2024-04-03';
    const t0 = Date.parse(`${day}T10:00:00Z`);
    expect(await claimChatTurn('turn-user', day, 1, 'a', t0, t0 + 32_000)).toBeUndefined();
    // Retried after its answer was lost, the claim meets itself: still its own.
    expect(await claimChatTurn('turn-user', day, 1, 'a', t0, t0 + 32_000)).toBeUndefined();
    expect(await claimChatTurn('turn-user', day, 1, 'b', t0 + 1000, t0 + 33_000)).toEqual({ reason: 'answering', until: t0 + 32_000 });
    await releaseChatTurn('turn-user', day, 'a', 0.4);
    expect(await claimChatTurn('turn-user', day, 1, 'b', t0 + 2000, t0 + 34_000)).toBeUndefined();
    // b's container died: past its claim, c takes the turn; b's late release counts its cost and leaves c's claim.
    expect(await claimChatTurn('turn-user', day, 1, 'c', t0 + 40_000, t0 + 72_000)).toBeUndefined();
    await releaseChatTurn('turn-user', day, 'b', 0.7);
    expect(await claimChatTurn('turn-user', day, 1, 'd', t0 + 41_000, t0 + 73_000)).toEqual({ reason: 'budget', spent: 1.1 });
    await releaseChatTurn('turn-user', day, 'c', 0);
    expect(await getItem('llm-usage', { pk: `CHAT_SPEND#${day}`, sk: 'USER#turn-user' }, true)).toMatchObject({ cost_usd: 1.1 });
    expect((await getItem('llm-usage', { pk: `CHAT_SPEND#${day}`, sk: 'USER#turn-user' }, true))?.answering_token).toBeUndefined();
    // Under a higher budget the next message may start.
    expect(await claimChatTurn('turn-user', day, 2, 'e', t0 + 42_000, t0 + 74_000)).toBeUndefined();
  });

  it('counts a released message once when the release was applied but its answer was lost (the retry finds its own work)', async () => {
    const day = '2024-04-04';
    const t0 = Date.parse(`${day}T10:00:00Z`);
    expect(await claimChatTurn('lost-release', day, 1, 'a', t0, t0 + 32_000)).toBeUndefined();
    let lost = 0;
    const stop = proxy.watch((r) =>
      r.operation === 'UpdateItem' && String(r.input.UpdateExpression).includes('released_token') && lost++ === 0 ? 'lose-answer' : undefined,
    );
    try {
      await releaseChatTurn('lost-release', day, 'a', 0.4);
    } finally {
      stop();
    }
    expect(lost).toBeGreaterThan(1); // the write was applied, its answer lost, and the client sent it again
    expect(await chatSpend('lost-release', day)).toBe(0.4);
  });
});

describe('the monthly projection', () => {
  const at = new Date('2026-11-30T06:00:00Z');
  it('divides by the days the cost was spent over: a young ledger, the part of today gone, at least a day', () => {
    // A ledger 3 days old in a 30-day period: 2 whole days and a quarter of today, not 30.
    expect(projectionDays(30, at, [{ day: '2026-11-28' }, { day: '2026-11-30' }])).toBeCloseTo(2.25, 10);
    // A ledger older than the period: the period's 6 whole days and a quarter.
    expect(projectionDays(7, at, [{ day: '2026-10-01' }])).toBeCloseTo(6.25, 10);
    // Today's first hours only: one day, not a quarter of one.
    expect(projectionDays(30, at, [{ day: '2026-11-30' }])).toBe(1);
    expect(projectionDays(30, at, [])).toBeCloseTo(29.25, 10);
  });
});

describe('usage reports match a brute-force sum over the ledger', () => {
  it.each([1, 7, 30, 365])('summary over %i days', async (days) => {
    const calls = inPeriod(days);
    const summary = await usageSummary(days, NOW);
    const runs = new Set(calls.map((c) => c.run_id));
    const cost = sumOf(calls, (c) => c.cost_usd);
    expect(summary.period_days).toBe(days);
    expect(summary.totals).toEqual({
      runs: runs.size,
      input_tokens: sumOf(calls, (c) => c.input_tokens),
      output_tokens: sumOf(calls, (c) => c.output_tokens),
      total_tokens: sumOf(calls, (c) => c.total_tokens),
      cost_usd: Math.round(cost * 1e6) / 1e6,
      avg_cost_per_run: runs.size ? Math.round((cost / runs.size) * 1e6) / 1e6 : 0,
      errors: new Set(calls.filter((c) => c.error).map((c) => c.run_id)).size,
    });
    // Over the days the cost was spent: from the period's start, or its first ledger day when later, to NOW.
    const first = calls.length ? Math.min(...calls.map((c) => Date.parse(`${c.day}T00:00:00Z`))) : 0;
    const periodStart = Date.parse(`${NOW.toISOString().slice(0, 10)}T00:00:00Z`) - (days - 1) * 86_400_000;
    const spentOver = Math.max(1, (NOW.getTime() - Math.max(periodStart, first)) / 86_400_000);
    expect(summary.monthly_projection_usd).toBeCloseTo((cost / spentOver) * 30, 5);
    const prices = await pricingTable();
    expect(summary.unpriced_models).toEqual([...new Set(calls.filter((c) => !c.error && !priceOf(prices, c.model)).map((c) => c.model))].sort());
    // every daily row is the brute-force sum of its day/source/model
    for (const row of summary.daily_usage) {
      const mine = calls.filter((c) => c.day === row.day && c.source === row.source && c.model === row.model);
      expect(row.runs).toBe(new Set(mine.map((c) => c.run_id)).size);
      expect(row.total_tokens).toBe(sumOf(mine, (c) => c.total_tokens));
      expect(row.cost_usd).toBeCloseTo(
        sumOf(mine, (c) => c.cost_usd),
        6,
      );
    }
    expect(sumOf(summary.daily_usage as never, (r: any) => r.input_tokens)).toBe(summary.totals.input_tokens);
    if (days >= 30) expect(new Set(summary.daily_usage.map((r) => r.source))).toEqual(new Set(['chat', 'agent']));
  });

  it('by model over 30 days', async () => {
    const calls = inPeriod(30);
    const { by_model } = await usageByModel(30, NOW);
    expect(by_model.map((r) => r.model).sort()).toEqual([...new Set(calls.map((c) => c.model))].sort());
    for (const row of by_model) {
      const mine = calls.filter((c) => c.model === row.model);
      expect(row).toMatchObject({
        runs: new Set(mine.map((c) => c.run_id)).size,
        input_tokens: sumOf(mine, (c) => c.input_tokens),
        output_tokens: sumOf(mine, (c) => c.output_tokens),
      });
      expect(row.cost_usd).toBeCloseTo(
        sumOf(mine, (c) => c.cost_usd),
        6,
      );
    }
  });
});

describe('what a report reads', () => {
  /** The ledger days `report` queried. */
  const daysRead = async (report: () => Promise<unknown>) =>
    (await requestsOf(proxy, report, (r) => r.operation === 'Query' && tableOf(r).endsWith('llm-usage'))).requests
      .map((r) => r.input.ExpressionAttributeValues[':pk'].S as string)
      .sort();

  it('reads a closed day once per container: a report again (a scrape every 15 s) reads today only, with the same figures', async () => {
    const first = await usageSummary(30, NOW);
    const days = await daysRead(async () => expect(await usageSummary(30, NOW)).toEqual(first));
    expect(days).toEqual(['DAY#2026-11-20']);
    expect(await daysRead(() => usageByModel(30, NOW))).toEqual(['DAY#2026-11-20']);
  });

  it('reads yesterday again until a quarter of an hour after midnight, when its last calls are in', async () => {
    const usage = (run_id: string): NewUsage => ({
      run_id,
      source: 'chat',
      model: 'gpt-4o-mini',
      input_tokens: 1000,
      output_tokens: 100,
      total_tokens: 1100,
      cost_usd: 0.00021,
      duration_ms: 400,
      error: false,
      user: 'u',
    });
    const midnight = Date.parse('2026-11-21T00:00:00Z');
    // One run on both sides of midnight: one run in the totals, a row on each day.
    recorded.push(await recordUsage(usage('midnight-run'), new Date(midnight - 1000)));
    recorded.push(await recordUsage(usage('midnight-run'), new Date(midnight + 1000)));
    const early = new Date(midnight + 5 * 60_000);
    const before = await usageSummary(2, early);
    recorded.push(await recordUsage(usage('late-run'), new Date(midnight - 500))); // written as yesterday ends
    expect(await daysRead(() => usageSummary(2, early))).toEqual(['DAY#2026-11-20', 'DAY#2026-11-21']);
    const after = await usageSummary(2, new Date(midnight + USAGE_DAY_CLOSED_AFTER_MS));
    expect(after.totals.runs).toBe(before.totals.runs + 1);
    const calls = recorded.filter((r) => r.day >= '2026-11-20');
    expect(after.totals.runs).toBe(new Set(calls.map((c) => c.run_id)).size);
    expect(after.daily_usage.filter((r) => r.model === 'gpt-4o-mini' && r.source === 'chat').map((r) => [r.day, r.runs])).toEqual([
      ['2026-11-21', 1],
      ['2026-11-20', new Set(calls.filter((c) => c.day === '2026-11-20' && c.model === 'gpt-4o-mini' && c.source === 'chat').map((c) => c.run_id)).size],
    ]);
    // Closed now: read once more, then kept.
    expect(await daysRead(() => usageSummary(2, new Date(midnight + USAGE_DAY_CLOSED_AFTER_MS)))).toEqual(['DAY#2026-11-21']);
  });

  it('reads of today, once read, only the calls of the last quarter of an hour: the earlier ones no longer change', async () => {
    const day = '2026-11-25'; // a day of its own
    const at = (hhmm: string) => new Date(`${day}T${hhmm}:00.000Z`);
    const usage = (run_id: string, input_tokens: number): NewUsage => ({
      run_id,
      source: 'agent',
      model: 'gpt-4o-mini',
      input_tokens,
      output_tokens: 10,
      total_tokens: input_tokens + 10,
      cost_usd: 0.0001,
      duration_ms: 500,
      error: false,
      user: 'agent-worker',
    });
    const mine: UsageRecord[] = [];
    for (let i = 0; i < 30; i++) mine.push(await recordUsage(usage(`morning-${i % 12}`, 100 + i), new Date(at('08:00').getTime() + i * 10 * 60_000)));
    const reads = async (now: Date) => {
      const { result, requests } = await requestsOf(
        proxy,
        () => usageSummary(1, now),
        (r) => r.operation === 'Query' && tableOf(r).endsWith('llm-usage'),
      );
      return { summary: result, from: requests.map((r) => r.input.ExpressionAttributeValues[':from']?.S ?? 'whole') };
    };
    expect((await reads(at('13:00'))).from).toEqual(['whole']);
    // Calls of the last minutes, one of a run already counted, and one dated inside the quarter of an hour.
    mine.push(await recordUsage(usage('morning-3', 1000), at('13:01')));
    mine.push(await recordUsage(usage('afternoon', 2000), at('13:02')));
    mine.push(await recordUsage(usage('afternoon', 3000), at('12:49')));
    const { summary, from } = await reads(at('13:05'));
    expect(from).toEqual([`${day}T12:45:00.000Z`]);
    expect(summary.totals).toMatchObject({
      runs: new Set(mine.map((c) => c.run_id)).size,
      input_tokens: sumOf(mine, (c) => c.input_tokens),
      total_tokens: sumOf(mine, (c) => c.total_tokens),
    });
    expect(summary.daily_usage).toEqual([
      expect.objectContaining({ day, runs: 13, avg_duration_s: Math.round((sumOf(mine, (c) => c.duration_ms) / 13 / 1000) * 100) / 100 }),
    ]);
  });

  it('past its bound keeps the newest closed days, so a report read again over a longer window still finds them', () => {
    const kept = new KeptDays<number>(10);
    const days = ['2026-11-01', '2026-11-02', '2026-11-03', '2026-11-04', '2026-11-05'];
    const hits = () => days.filter((day) => kept.get(`t\n${day}`)).length;
    // Reads finish in any order; each day holds 3 entries, 15 in all against a bound of 10.
    for (const day of ['2026-11-04', '2026-11-01', '2026-11-05', '2026-11-02', '2026-11-03']) kept.keep(`t\n${day}`, day, [1, 2, 3]);
    expect(days.filter((day) => kept.get(`t\n${day}`))).toEqual(['2026-11-03', '2026-11-04', '2026-11-05']);
    // The same window again, as every scrape reads it: what was kept is found, an older day is not kept.
    for (const day of days) if (!kept.get(`t\n${day}`)) kept.keep(`t\n${day}`, day, [1, 2, 3]);
    expect(hits()).toBe(3);
    kept.keep(
      't\n2026-11-06',
      '2026-11-06',
      Array.from({ length: 11 }, (_, i) => i),
    ); // larger than the bound: not kept
    expect(kept.get('t\n2026-11-06')).toBeUndefined();
    expect(hits()).toBe(3);
  });
});

describe('a model the price list lacks', () => {
  it('stays named unpriced for its calls costed 0 while it lacked a price, after a price is added (the calls keep their cost)', async () => {
    const openai = await startFakeOpenAi();
    const provider = llmProvider({ LLM_PROVIDER: 'openai', LLM_MODEL: 'brand-new-model', LLM_BASE_URL: openai.baseUrl })!;
    /** One answered call of a run, and its ledger row. */
    const callOf = async (runId: string) => {
      openai.enqueueText('hello');
      await recordedCall(provider, { messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }] }, { runId, source: 'chat', user: 'u' });
      return (await listUsage(1)).find((u) => u.run_id === runId)!;
    };
    try {
      forgetPricing();
      expect(await callOf('unpriced-run')).toMatchObject({ model: 'brand-new-model', cost_usd: 0, unpriced: true });
      expect((await usageSummary(1)).unpriced_models).toEqual(['brand-new-model']);

      process.env.LLM_PRICING = JSON.stringify([{ model: 'brand-new-model', input_per_mtok: 3, output_per_mtok: 15 }]);
      forgetPricing();
      const after = await usageSummary(1);
      expect(after.unpriced_models).toEqual(['brand-new-model']); // its calls in the period still cost 0
      expect(after.totals.cost_usd).toBe(0);
      // a call made now is priced, and not what keeps the model listed
      const priced = await callOf('priced-run');
      expect(priced.unpriced).toBe(false);
      expect(priced.cost_usd).toBeGreaterThan(0);
    } finally {
      delete process.env.LLM_PRICING;
      forgetPricing();
      await openai.close();
    }
  });
  it('is named unpriced for a failed call the provider billed (its usage reported), not for one that cost nothing', async () => {
    const openai = await startFakeOpenAi();
    const provider = (model: string) => llmProvider({ LLM_PROVIDER: 'openai', LLM_MODEL: model, LLM_BASE_URL: openai.baseUrl })!;
    const call = (model: string, runId: string) =>
      recordedCall(provider(model), { messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }] }, { runId, source: 'chat', user: 'u' });
    try {
      forgetPricing();
      // An answer we cannot use (no choices) that says what it cost: a bad_response, billed.
      openai.enqueue({
        kind: 'raw',
        status: 200,
        body: JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          model: 'm',
          choices: [],
          usage: { prompt_tokens: 5000, completion_tokens: 400, total_tokens: 5400 },
        }),
      });
      await expect(call('billed-but-unusable-model', 'billed-failure')).rejects.toThrow();
      // A refused request: nothing billed, nothing to price.
      openai.enqueueError(400);
      await expect(call('refused-model', 'refused-failure')).rejects.toThrow();
      const rows = await listUsage(1);
      expect(rows.find((u) => u.run_id === 'billed-failure')).toMatchObject({
        error: true,
        input_tokens: 5000,
        output_tokens: 400,
        cost_usd: 0,
        unpriced: true,
      });
      expect(rows.find((u) => u.run_id === 'refused-failure')).toMatchObject({ error: true, input_tokens: 0, cost_usd: 0 });
      const summary = await usageSummary(1);
      // 5,400 tokens costed 0 for want of a price: the report says so, as for an answered call.
      expect(summary.unpriced_models).toContain('billed-but-unusable-model');
      expect(summary.unpriced_models).not.toContain('refused-model');
    } finally {
      forgetPricing();
      await openai.close();
    }
  });
});
