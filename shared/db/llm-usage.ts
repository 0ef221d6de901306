// LLM usage ledger (table `llm-usage`): one item per LLM call, partitioned by
// UTC day so a report reads one Query per day of its period.
//   pk = DAY#<yyyy-mm-dd>, sk = <at>#<call id>
import { randomUUID } from 'node:crypto';
import { mapLimit, putItem, queryAll } from './client.js';
import { boolean, itemReader, number, oneOf, string } from './items.js';
import { windowDays } from './metrics.js';

const USAGE_SOURCES = ['chat', 'agent'] as const;
export type UsageSource = (typeof USAGE_SOURCES)[number];

export interface UsageRecord {
  call_id: string;
  /** One chat message, patrol scan or investigation: the calls it made share it. */
  run_id: string;
  day: string;
  at: string;
  source: UsageSource;
  model: string;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost_usd: number;
  duration_ms: number;
  error: boolean;
  /** The user the call ran for (the patrol and agents: their worker name). */
  user: string;
}

const readUsage = itemReader<UsageRecord>({
  call_id: string,
  run_id: string,
  day: string,
  at: string,
  source: oneOf(USAGE_SOURCES),
  model: string,
  input_tokens: number,
  output_tokens: number,
  total_tokens: number,
  cost_usd: number,
  duration_ms: number,
  error: boolean,
  user: string,
});

export type NewUsage = Omit<UsageRecord, 'call_id' | 'day' | 'at'>;

/** A call's ledger record, its id and time fixed: putting it again (a retry) writes the same item, never a second. */
export function usageRecord(usage: NewUsage, now = new Date()): UsageRecord {
  const at = now.toISOString();
  return { call_id: randomUUID(), day: at.slice(0, 10), at, ...usage };
}

export async function putUsage(record: UsageRecord): Promise<void> {
  await putItem('llm-usage', { pk: `DAY#${record.day}`, sk: `${record.at}#${record.call_id}`, ...record });
}

export async function recordUsage(usage: NewUsage, now = new Date()): Promise<UsageRecord> {
  const record = usageRecord(usage, now);
  await putUsage(record);
  return record;
}

/** Every call of the last `days` UTC days (today included), oldest day first. */
export async function listUsage(days: number, now = new Date()): Promise<UsageRecord[]> {
  const pages = await mapLimit(windowDays(days, now), 16, (day) =>
    queryAll('llm-usage', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `DAY#${day}` } }),
  );
  return pages.flat().map(readUsage);
}
