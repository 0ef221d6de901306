// This container's cache of what an issues list and its KPIs read (issue 21 §3):
// a window's summaries and the records of pages shown, kept behind the issues'
// generation marker (shared/db/issues.ts) as the fleet view is kept behind the
// scores' one. One cache per kind of issue: rule issues here, AI issues in
// shared/ai-issues/queries.ts (their table has its own marker). Every read costs one strongly consistent read of the
// marker; the summaries and records are read again only when it moved, after
// the TTL, or for what the cache does not hold.
//
// - Valid while the marker has not moved: every issue write moves it (in its
//   transaction, or right after it), so a read that follows a write anywhere
//   reads afresh. What is held belongs to one generation; a new one drops it all.
// - Settled reads only: the window is read from the activity index (gsi1),
//   and a global index cannot be read consistently; it follows the table
//   within a fraction of a second. So a read is kept only when it started
//   `settleMs` after this container first saw the marker's generation (that
//   sighting is after the write, on this container's own clock); an earlier
//   one is answered but not kept. The records (an eventually consistent
//   BatchGet) follow the same rule.
// - A window is keyed by `days` and holds the start it was read from: a later
//   read of the same `days` starts later, and its summaries are a prefix of the
//   held ones (newest activity first), found by the activity keys; an earlier
//   start (a `now` in the past) is read afresh.
// - Bounded: `windows` windows (least recently used dropped), `summaries`
//   summaries in all (a larger window is served but not kept), `records` full
//   records (least recently used dropped), and `ttlMs` as the backstop of a
//   marker that failed to move.
import { currentIssuesGeneration, getIssues, listIssueSummaryWindow, type SummaryWindow } from '../db/issues.js';
import { physicalTableName, type TableName } from '../db/tables.js';

/** The caches' bounds (each cache's own); tests shorten `settleMs` and `ttlMs`. */
export const issueCacheSettings = {
  ttlMs: 60_000,
  settleMs: 2_000,
  windows: 4,
  summaries: 50_000,
  records: 1_000,
};

/** Where a cache reads: the table (its marker's), the marker, a window, and records by id. */
export interface IssueListSource<S, R> {
  table: TableName;
  generation(): Promise<number>;
  window(since: Date): Promise<SummaryWindow<S>>;
  /** The records of these ids, any order; those gone (or out of lists) left out. */
  records(ids: string[]): Promise<R[]>;
}

interface HeldWindow<S> extends SummaryWindow<S> {
  /** The start it was read from (ISO). */
  since: string;
  /** When its read started (Date.now()). */
  at: number;
  /** The last shorter prefix handed out: the same array for the same prefix, so what lists derive from it is derived once. */
  prefix?: S[];
}

interface Generation<S, R> {
  /** The issues table it was read from: one process may serve more than one set of tables (local services in tests). */
  table: string;
  generation: number;
  /** When this container first saw it. */
  seenAt: number;
  windows: Map<number, HeldWindow<S>>;
  /** Window reads under way: concurrent misses in one container share one read. */
  reading: Map<number, { since: string; read: Promise<SummaryWindow<S>> }>;
  records: Map<string, { record: R; at: number }>;
}

/** What a list or KPI read needs, as of one read of the marker. */
export interface IssueWindow<S, R> {
  /** The window's summaries, newest activity first (as the source reads them); shared with the cache, never changed. */
  summaries: S[];
  /** Records of these issues, in the order asked, those gone left out. */
  records(issueIds: string[]): Promise<R[]>;
}

export interface IssueListCache<S, R> {
  /** Summaries of issues Ongoing, or resolved at or after `since`; `days` names the window. */
  window(days: number, since: Date): Promise<IssueWindow<S, R>>;
  /** For tests: forget what this container holds, as a new container would start. */
  drop(): void;
}

/** A cache of one kind of issue, read from `source`. */
export function issueListCache<S, R extends { issue_id: string }>(source: IssueListSource<S, R>): IssueListCache<S, R> {
  let held: Generation<S, R> | undefined;
  /** A read that started now may be kept: this generation has settled, and is still the one held. */
  const keepable = (current: Generation<S, R>, startedAt: number) => held === current && startedAt - current.seenAt >= issueCacheSettings.settleMs;
  return {
    async window(days, since) {
      const generation = await source.generation();
      const table = physicalTableName(source.table);
      if (held?.generation !== generation || held.table !== table)
        held = { table, generation, seenAt: Date.now(), windows: new Map(), reading: new Map(), records: new Map() };
      const current = held;
      return { summaries: await summaries(source, current, keepable, days, since), records: (ids) => records(source, current, keepable, ids) };
    },
    drop() {
      held = undefined;
    },
  };
}

type Keepable<S, R> = (current: Generation<S, R>, startedAt: number) => boolean;

async function summaries<S, R>(source: IssueListSource<S, R>, current: Generation<S, R>, keepable: Keepable<S, R>, days: number, start: Date): Promise<S[]> {
  const since = start.toISOString();
  const window = current.windows.get(days);
  if (window && Date.now() - window.at < issueCacheSettings.ttlMs && window.since <= since) {
    current.windows.delete(days); // most recently used last
    current.windows.set(days, window);
    return from(window, since);
  }
  const reading = current.reading.get(days);
  if (reading && reading.since <= since) return from(await reading.read, since);

  const startedAt = Date.now();
  const read = source.window(start);
  current.reading.set(days, { since, read });
  try {
    const fresh = await read;
    if (keepable(current, startedAt)) hold(current, days, { ...fresh, since, at: startedAt });
    return fresh.summaries;
  } finally {
    if (current.reading.get(days)?.read === read) current.reading.delete(days);
  }
}

function hold<S, R>(current: Generation<S, R>, days: number, window: HeldWindow<S>): void {
  current.windows.delete(days);
  if (window.summaries.length > issueCacheSettings.summaries) return;
  current.windows.set(days, window);
  let total = 0;
  for (const w of current.windows.values()) total += w.summaries.length;
  for (const [key, w] of current.windows) {
    if (current.windows.size <= issueCacheSettings.windows && total <= issueCacheSettings.summaries) break;
    current.windows.delete(key); // least recently used first
    total -= w.summaries.length;
  }
}

/** The summaries of a window whose activity key is at or after `since`: a prefix, the keys descending. */
function from<S>(window: SummaryWindow<S> & { prefix?: S[] }, since: string): S[] {
  const keys = window.activity;
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! >= since) lo = mid + 1;
    else hi = mid;
  }
  if (lo === keys.length) return window.summaries;
  if (window.prefix?.length !== lo) window.prefix = window.summaries.slice(0, lo);
  return window.prefix;
}

async function records<S, R extends { issue_id: string }>(
  source: IssueListSource<S, R>,
  current: Generation<S, R>,
  keepable: Keepable<S, R>,
  issueIds: string[],
): Promise<R[]> {
  const now = Date.now();
  const found = new Map<string, R>();
  for (const id of issueIds) {
    const entry = current.records.get(id);
    if (!entry || now - entry.at >= issueCacheSettings.ttlMs) continue;
    current.records.delete(id); // most recently used last
    current.records.set(id, entry);
    found.set(id, entry.record);
  }
  const missing = issueIds.filter((id) => !found.has(id));
  if (missing.length) {
    const startedAt = Date.now();
    const fetched = await source.records(missing);
    const keep = keepable(current, startedAt);
    for (const record of fetched) {
      found.set(record.issue_id, record);
      if (!keep) continue;
      current.records.delete(record.issue_id);
      current.records.set(record.issue_id, { record, at: startedAt });
    }
    for (const id of current.records.keys()) {
      if (current.records.size <= issueCacheSettings.records) break;
      current.records.delete(id); // least recently used first
    }
  }
  return issueIds.flatMap((id) => found.get(id) ?? []);
}

const ruleIssues = issueListCache({ table: 'issues', generation: currentIssuesGeneration, window: listIssueSummaryWindow, records: getIssues });

/** The rule issues' window (shared/issues/queries.ts). */
export const issueWindow = ruleIssues.window;

/** For tests: forget this container's cache of rule issues, as a new container would start. */
export const dropIssueListCache = ruleIssues.drop;
