// The metrics puller's state (table `metric-pulls`): a watermark per metric,
// the last run, the inventory's last pull, and the latest errors.
//   pk = METRIC#<key>,  sk = STATE  → watermark, pending window, last outcome
//   pk = RUN,           sk = LAST   → the last run and the last fully successful one
//   pk = INVENTORY,     sk = STATE  → the inventory's last pull
//   pk = ERRORS,        sk = <at>#<n> → one error (kept 7 days)
// One puller runs at a time (a lease lock), so the state items are written
// whole; errors are appended.
import { batchGet, batchPut, getItem, putItem, queryAll } from './client.js';
import { itemReader, nullable, number, oneOf, string } from './items.js';

/** Where a metric's pull stands. Times are epoch seconds on the step grid. */
export interface MetricPullState {
  metric_key: string;
  /** The last step stored; null before the first pull. */
  watermark: number | null;
  /** A window being written (set before its rollups, cleared with the watermark after): replayed exactly after a crash. */
  pending_from: number | null;
  pending_to: number | null;
  last_success_at: string | null;
  /** Of the last run that had a window for it (a run with nothing new to ask leaves these as they were). */
  accepted_last: number;
  refused_last: number;
  /** The most frequent reason of the last run's refusals. */
  refusal_last: string | null;
  /** The first warning or info Prometheus gave with the last run's answers (absent on older items). */
  warning_last: string | null;
  last_error_at: string | null;
  last_error: string | null;
}

export interface PullRunRecord {
  started_at: string;
  finished_at: string;
  outcome: 'ok' | 'partial' | 'failed' | 'disabled';
  accepted: number;
  refused: number;
  duration_ms: number;
  /** The end of the last run in which every metric was pulled. */
  last_success_at: string | null;
}

export interface InventoryPullState {
  last_success_at: string | null;
  upserted_last: number;
  refused_last: number;
  last_error_at: string | null;
  last_error: string | null;
}

export interface PullErrorRecord {
  at: string;
  metric_key: string | null;
  message: string;
}

const ERROR_RETENTION_DAYS = 7;
const metricKey = (metric: string) => ({ pk: `METRIC#${metric}`, sk: 'STATE' });
const RUN_KEY = { pk: 'RUN', sk: 'LAST' };
const INVENTORY_KEY = { pk: 'INVENTORY', sk: 'STATE' };

const readState = itemReader<MetricPullState>({
  metric_key: string,
  watermark: nullable(number),
  pending_from: nullable(number),
  pending_to: nullable(number),
  last_success_at: nullable(string),
  accepted_last: number,
  refused_last: number,
  refusal_last: nullable(string),
  warning_last: nullable(string),
  last_error_at: nullable(string),
  last_error: nullable(string),
});
const readRun = itemReader<PullRunRecord>({
  started_at: string,
  finished_at: string,
  outcome: oneOf(['ok', 'partial', 'failed', 'disabled']),
  accepted: number,
  refused: number,
  duration_ms: number,
  last_success_at: nullable(string),
});
const readInventory = itemReader<InventoryPullState>({
  last_success_at: nullable(string),
  upserted_last: number,
  refused_last: number,
  last_error_at: nullable(string),
  last_error: nullable(string),
});
const readError = itemReader<PullErrorRecord>({ at: string, metric_key: nullable(string), message: string });

export const emptyPullState = (metric: string): MetricPullState => ({
  metric_key: metric,
  watermark: null,
  pending_from: null,
  pending_to: null,
  last_success_at: null,
  accepted_last: 0,
  refused_last: 0,
  refusal_last: null,
  warning_last: null,
  last_error_at: null,
  last_error: null,
});

/** The state of each of these metrics (an empty state for one never pulled). */
export async function readPullStates(metrics: readonly string[]): Promise<Map<string, MetricPullState>> {
  const items = metrics.length ? await batchGet('metric-pulls', metrics.map(metricKey), true) : [];
  const states = new Map(metrics.map((m) => [m, emptyPullState(m)]));
  for (const item of items) {
    const state = readState(item);
    states.set(state.metric_key, state);
  }
  return states;
}

export async function putPullStates(states: readonly MetricPullState[]): Promise<void> {
  if (states.length)
    await batchPut(
      'metric-pulls',
      states.map((s) => ({ ...metricKey(s.metric_key), ...s })),
    );
}

export async function putPullRun(run: PullRunRecord): Promise<void> {
  await putItem('metric-pulls', { ...RUN_KEY, ...run });
}

export async function getPullRun(): Promise<PullRunRecord | null> {
  const item = await getItem('metric-pulls', RUN_KEY, true);
  return item ? readRun(item) : null;
}

export async function putInventoryState(state: InventoryPullState): Promise<void> {
  await putItem('metric-pulls', { ...INVENTORY_KEY, ...state });
}

export async function getInventoryState(): Promise<InventoryPullState | null> {
  const item = await getItem('metric-pulls', INVENTORY_KEY, true);
  return item ? readInventory(item) : null;
}

export async function recordPullErrors(errors: readonly PullErrorRecord[]): Promise<void> {
  const ttl = (at: string) => Math.floor(Date.parse(at) / 1000) + ERROR_RETENTION_DAYS * 86_400;
  if (errors.length)
    await batchPut(
      'metric-pulls',
      errors.map((e, n) => ({ pk: 'ERRORS', sk: `${e.at}#${String(n).padStart(3, '0')}`, ...e, ttl: ttl(e.at) })),
    );
}

/**
 * The newest errors first, none past its expiry (`ttl`): DynamoDB's TTL deletes an expired item only
 * eventually, within days. The key condition ends the read at the retention, so it never pages
 * through expired items left behind, and `Limit` holds: the filter drops nothing else.
 */
export async function latestPullErrors(limit: number, now = new Date()): Promise<PullErrorRecord[]> {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const items = await queryAll(
    'metric-pulls',
    {
      KeyConditionExpression: 'pk = :pk AND sk >= :since',
      FilterExpression: '#ttl > :now',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':pk': 'ERRORS', ':since': new Date((nowSeconds - ERROR_RETENTION_DAYS * 86_400) * 1000).toISOString(), ':now': nowSeconds },
      ScanIndexForward: false,
      Limit: limit,
    },
    limit,
  );
  return items.map(readError);
}
