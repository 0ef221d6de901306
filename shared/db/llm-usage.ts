// LLM usage ledger (table `llm-usage`): one item per LLM call, partitioned by
// UTC day so a report reads one Query per day of its period.
//   pk = DAY#<yyyy-mm-dd>, sk = <at>#<call id>
// Reports read the ledger as run sums per day (listUsageRuns); a closed day's are kept
// per container, so a scrape every 15 s reads today's partition, not 30 days of calls.
// Beside it, what each person's chat messages cost per UTC day (CHAT_DAILY_BUDGET_USD):
//   pk = CHAT_SPEND#<yyyy-mm-dd>, sk = USER#<username> → cost_usd, and the claim of the message
//   being answered (answering_until, answering_token; released_token: the last claim ended)
// Both expire (`ttl`): a call after 400 days as other history, a day's spend a week after it.
import { randomUUID } from 'node:crypto';
import { conditionalWrite, getItem, mapLimit, putItem, queryAll, tableName, updateItem } from './client.js';
import { ttlAfterDays } from './tables.js';
import { boolean, itemReader, number, oneOf, optional, orElse, string } from './items.js';
import { windowDays } from './days.js';

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
  /** Of input_tokens, those read from / written to the provider's prompt cache (0: none, or a call recorded before they were). */
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  /**
   * Answered while the price list had no price for its model, so costed 0: true; priced: false. Absent on calls
   * recorded before it was kept, which the reports judge by today's price list.
   */
  unpriced?: boolean;
}

/** The cache counts: a call's record has them, the reports' run sums do not (no answer shows them). */
type CacheCounts = 'cached_input_tokens' | 'cache_write_input_tokens';

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
  cached_input_tokens: orElse(number, 0),
  cache_write_input_tokens: orElse(number, 0),
  unpriced: optional(boolean),
});

/** A call to record; without cache counts, none of its input was cached. */
export type NewUsage = Omit<UsageRecord, 'call_id' | 'day' | 'at' | CacheCounts> & Partial<Pick<UsageRecord, CacheCounts>>;

/** A call's ledger record, its id and time fixed: putting it again (a retry) writes the same item, never a second. */
export function usageRecord(usage: NewUsage, now = new Date()): UsageRecord {
  const at = now.toISOString();
  return {
    call_id: randomUUID(),
    day: at.slice(0, 10),
    at,
    ...usage,
    cached_input_tokens: usage.cached_input_tokens ?? 0,
    cache_write_input_tokens: usage.cache_write_input_tokens ?? 0,
  };
}

/** A record as the ledger stores it: kept as long as other history (the routes read at most 365 days of it), then TTL removes it. */
export const usageItem = (record: UsageRecord) => ({
  pk: `DAY#${record.day}`,
  sk: `${record.at}#${record.call_id}`,
  ...record,
  ttl: ttlAfterDays(new Date(record.at)),
});

export async function putUsage(record: UsageRecord): Promise<void> {
  await putItem('llm-usage', usageItem(record));
}

export async function recordUsage(usage: NewUsage, now = new Date()): Promise<UsageRecord> {
  const record = usageRecord(usage, now);
  await putUsage(record);
  return record;
}

/** A day's calls (those dated at or after `from` when given). */
const readDay = async (day: string, consistent = false, from?: string) =>
  (
    await queryAll('llm-usage', {
      KeyConditionExpression: from ? 'pk = :pk AND sk >= :from' : 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `DAY#${day}`, ...(from && { ':from': from }) },
      ConsistentRead: consistent,
    })
  ).map(readUsage);

/**
 * The calls of run `runId` dated from `from` (an instant) until `to`: the days between are read from `from` on, and
 * only that run's calls come back. For a run that ended without saying what it spent (its worker killed): the ledger
 * recorded each of its calls as it ended.
 */
export async function listRunUsage(runId: string, from: string, to = new Date()): Promise<UsageRecord[]> {
  const days: string[] = [];
  for (let day = Date.parse(`${from.slice(0, 10)}T00:00:00Z`); day <= to.getTime(); day += 86_400_000) days.push(new Date(day).toISOString().slice(0, 10));
  const perDay = await mapLimit(days, 4, async (day) =>
    (
      await queryAll('llm-usage', {
        KeyConditionExpression: 'pk = :pk AND sk >= :from',
        FilterExpression: 'run_id = :run',
        ExpressionAttributeValues: { ':pk': `DAY#${day}`, ':from': from, ':run': runId },
        ConsistentRead: true,
      })
    ).map(readUsage),
  );
  return perDay.flat();
}

/**
 * What run `runId` spent, as the ledger recorded its calls since `from` (listRunUsage): for a run whose worker ended
 * without saying (killed, timed out), so what reports it carries what was charged. The model is its last call's.
 * Undefined when the ledger holds no call of it.
 */
export async function runSpend(runId: string, from: string, to = new Date()) {
  const calls = await listRunUsage(runId, from, to);
  if (calls.length === 0) return undefined;
  calls.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const total = (key: 'input_tokens' | 'output_tokens' | 'total_tokens' | 'cost_usd') => calls.reduce((n, c) => n + c[key], 0);
  return {
    model: calls.at(-1)!.model,
    input_tokens: total('input_tokens'),
    output_tokens: total('output_tokens'),
    total_tokens: total('total_tokens'),
    cost_usd: Math.round(total('cost_usd') * 1e6) / 1e6,
  };
}

/** Every call of the last `days` UTC days (today included), oldest day first. */
export async function listUsage(days: number, now = new Date()): Promise<UsageRecord[]> {
  return (await mapLimit(windowDays(days, now), 16, (day) => readDay(day))).flat();
}

/**
 * One run's calls of one day with one source and model, summed. The reports count runs by
 * id and add the rest, so these give the figures the calls give: a run whose calls span
 * two days or models is still one run in the totals.
 */
export interface UsageRun extends Omit<UsageRecord, 'call_id' | 'at' | 'user' | CacheCounts> {
  /** Some call of it answered (`error`: some call failed). */
  answered: boolean;
}

/**
 * When a day's ledger no longer changes: a call's record is dated as the call ends and put
 * straight away (retried once), so a quarter of an hour after midnight UTC the day is closed.
 */
export const USAGE_DAY_CLOSED_AFTER_MS = 15 * 60_000;
/**
 * Closed days' entries kept in memory, at most `max` entries in all. Every report reads a window
 * ending today, so past the bound the oldest days go, and a day older than all kept is not kept:
 * dropping the first kept instead would, on a window larger than the bound, drop the day the next
 * report reads first, and keep none that it reads.
 */
export class KeptDays<T> {
  private readonly days = new Map<string, { day: string; items: T[] }>();
  private size = 0;

  constructor(private readonly max: number) {}

  get(key: string): T[] | undefined {
    return this.days.get(key)?.items;
  }

  keep(key: string, day: string, items: T[]): void {
    if (this.days.has(key) || items.length > this.max) return;
    this.days.set(key, { day, items });
    this.size += items.length;
    while (this.size > this.max) {
      let oldest = key;
      for (const [k, kept] of this.days) if (kept.day < this.days.get(oldest)!.day) oldest = k;
      this.size -= this.days.get(oldest)!.items.length;
      this.days.delete(oldest);
    }
  }
}

/** Run sums of closed days this container keeps (≈ 200 bytes each). */
const closedDays = new KeptDays<UsageRun>(100_000);

/** Sums of the same run, day, source and model added into one. */
function mergeRuns(parts: readonly UsageRun[]): UsageRun[] {
  const runs = new Map<string, UsageRun>();
  for (const part of parts) {
    const key = `${part.day}\n${part.source}\n${part.model}\n${part.run_id}`;
    const run = runs.get(key);
    if (!run) runs.set(key, { ...part });
    else {
      run.input_tokens += part.input_tokens;
      run.output_tokens += part.output_tokens;
      run.total_tokens += part.total_tokens;
      run.cost_usd += part.cost_usd;
      run.duration_ms += part.duration_ms;
      run.error ||= part.error;
      run.answered ||= part.answered;
      // Unpriced if any call was; unknown (judged by today's prices) if none was and some was recorded without it.
      run.unpriced = run.unpriced || part.unpriced ? true : run.unpriced === undefined || part.unpriced === undefined ? undefined : false;
    }
  }
  return [...runs.values()];
}

const runsOf = (calls: readonly UsageRecord[]) =>
  mergeRuns(
    calls.map(({ call_id: _id, at: _at, user: _user, cached_input_tokens: _read, cache_write_input_tokens: _write, ...call }) => ({
      ...call,
      answered: !call.error,
      // A failed call costs nothing, priced or not, unless the provider reported its usage (a bad_response it billed):
      // its row then says whether a price costed those tokens (recordedCall), and an unpriced one is named as an answered one.
      unpriced: call.error ? call.unpriced === true : call.unpriced,
    })),
  );

/**
 * A day still open (today, and yesterday until a quarter past midnight): its calls dated more
 * than a quarter of an hour ago no longer change either (the closed-day rule, per call), so they
 * are kept as run sums and a report reads only the calls since; when the day closes it is read
 * whole once more (closedDays). Per table and day; at most KEPT_OPEN_RUNS run sums a day.
 */
const openDays = new Map<string, { settledBefore: string; runs: UsageRun[] }>();
const KEPT_OPEN_RUNS = 100_000;

async function openDayRuns(key: string, day: string, now: Date): Promise<UsageRun[]> {
  const settledBefore = new Date(now.getTime() - USAGE_DAY_CLOSED_AFTER_MS).toISOString();
  const kept = openDays.get(key);
  // A report as of an earlier time (never a live one) reads the day whole.
  const from = kept && kept.settledBefore <= settledBefore ? kept : undefined;
  const calls = await readDay(day, false, from?.settledBefore);
  const runs = mergeRuns([...(from?.runs ?? []), ...runsOf(calls.filter((c) => c.at < settledBefore))]);
  if (runs.length <= KEPT_OPEN_RUNS) openDays.set(key, { settledBefore, runs });
  else openDays.delete(key);
  return [...runs, ...runsOf(calls.filter((c) => c.at >= settledBefore))];
}

/** The run sums of the last `days` UTC days (today included): closed days, and the settled calls of open ones, from this container's memory once read. */
export async function listUsageRuns(days: number, now = new Date()): Promise<UsageRun[]> {
  const table = tableName('llm-usage');
  const perDay = await mapLimit(windowDays(days, now), 16, async (day) => {
    const key = `${table}\n${day}`;
    const kept = closedDays.get(key);
    if (kept) return kept;
    const closed = Date.parse(`${day}T00:00:00Z`) + 86_400_000 + USAGE_DAY_CLOSED_AFTER_MS <= now.getTime();
    if (!closed) return openDayRuns(key, day, now);
    // A closed day is read once for the container's life: whole and consistently, so its last writes are in.
    openDays.delete(key);
    const runs = runsOf(await readDay(day, true));
    closedDays.keep(key, day, runs);
    return runs;
  });
  return perDay.flat();
}

const chatSpendKey = (user: string, day: string) => ({ pk: `CHAT_SPEND#${day}`, sk: `USER#${user}` });
/** A day's chat spend counts only on that day (the daily budget): kept a week past it, then TTL removes it. */
const CHAT_SPEND_KEPT_DAYS = 7;

/** What `user`'s chat messages of `day` (UTC) cost so far, in USD. */
export async function chatSpend(user: string, day: string): Promise<number> {
  const item = await getItem('llm-usage', chatSpendKey(user, day), true);
  const cost = Number(item?.cost_usd ?? 0);
  return Number.isFinite(cost) ? cost : 0;
}

/**
 * Adds a chat message's cost to its user's day. An ADD: a write retried after its answer was lost may count
 * the message twice, which errs on the budget's side; the ledger's own rows stay exact.
 */
export async function addChatSpend(user: string, day: string, costUsd: number): Promise<void> {
  await updateItem('llm-usage', chatSpendKey(user, day), {
    UpdateExpression: 'ADD cost_usd :cost SET #ttl = :ttl',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':cost': costUsd, ':ttl': chatSpendTtl(day) },
  });
}

const chatSpendTtl = (day: string) => ttlAfterDays(new Date(`${day}T00:00:00Z`), CHAT_SPEND_KEPT_DAYS + 1);

/** Why a chat message may not start: the day's spend reached the budget, or another message of the person's is being answered until `until` (epoch ms). */
export type ChatTurnRefused = { reason: 'budget'; spent: number } | { reason: 'answering'; until: number };

/**
 * Claims `user`'s turn to chat on `day`, in one conditional update of the day's spend item: only while
 * what the day's messages cost is under `budgetUsd` and no other message of theirs is being answered
 * (its claim held until `until`, epoch ms). So parallel messages cannot each pass the budget's check and
 * all be spent: one message at a time, and its cost is counted (releaseChatTurn) before the next starts.
 * A claim's answer lost and retried meets itself: `token` tells it apart.
 */
export async function claimChatTurn(
  user: string,
  day: string,
  budgetUsd: number,
  token: string,
  now: number,
  until: number,
): Promise<ChatTurnRefused | undefined> {
  const key = chatSpendKey(user, day);
  for (let attempt = 1; ; attempt++) {
    const claim = await conditionalWrite(
      'llm-usage',
      key,
      () =>
        updateItem('llm-usage', key, {
          UpdateExpression: 'SET answering_until = :until, answering_token = :token, #ttl = :ttl',
          ConditionExpression: '(attribute_not_exists(cost_usd) OR cost_usd < :budget) AND (attribute_not_exists(answering_until) OR answering_until <= :now)',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':until': until, ':token': token, ':ttl': chatSpendTtl(day), ':budget': budgetUsd, ':now': now },
        }),
      (item) => item.answering_token === token,
    );
    if (claim.written) return undefined;
    const item = await getItem('llm-usage', key, true);
    const spent = Number(item?.cost_usd ?? 0);
    if (Number.isFinite(spent) && spent >= budgetUsd) return { reason: 'budget', spent };
    const answeringUntil = Number(item?.answering_until);
    if (answeringUntil > now) return { reason: 'answering', until: answeringUntil };
    // The other message ended between the claim and the read: claim again (a few times, then say so).
    if (attempt === 3) return { reason: 'answering', until: now + 1000 };
  }
}

/**
 * Ends the claim `token` made and counts what its message cost, in one update that marks the item
 * released by it (so a retry of this write whose answer was lost finds its own work and adds nothing);
 * if the claim had lapsed (another message has it now, or none), only the cost is added.
 */
export async function releaseChatTurn(user: string, day: string, token: string, costUsd: number): Promise<void> {
  const key = chatSpendKey(user, day);
  const released = await conditionalWrite(
    'llm-usage',
    key,
    () =>
      updateItem('llm-usage', key, {
        UpdateExpression: 'ADD cost_usd :cost SET released_token = :token REMOVE answering_until, answering_token',
        ConditionExpression: 'answering_token = :token',
        ExpressionAttributeValues: { ':cost': costUsd, ':token': token },
      }),
    (item) => item.released_token === token,
  );
  if (!released.written && costUsd > 0) await addChatSpend(user, day, costUsd);
}
