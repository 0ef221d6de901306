// The chat assistant's tools (issue 8): each with a zod-checked input, a JSON
// Schema for the model, and an output bounded in size. A tool failure is an
// answer for the model (an error tool result), never the request's failure.
import type * as z from '../zod.js';
import { createLogger } from '../log.js';
import { listAlertsSince } from '../db/alerts.js';
import { listClusterOngoingIssues, listIssuesActiveSince } from '../db/issues.js';
import { listClusterLogs, type LogRecord } from '../db/logs.js';
import { windowDays } from '../db/days.js';
import { readFleetRollupColumns } from '../db/rollup-packs.js';
import type { ToolSpec } from '../llm/types.js';
import { sliceChars } from '../text.js';
import { fleetView, type FleetView } from '../scoring/fleet-view.js';
import { openFleetDatabase, SqlRefused, type FleetDatabase } from './sql.js';
import { SQL_ROLLUP_DAYS } from './sql-snapshot.js';
import { TOOL_INPUTS } from './tool-inputs.js';
import { TOOL_SCHEMAS_FILE, toolInputSchemas } from './tool-schemas.js';

/** Characters of one tool result the model sees at most. */
export const TOOL_OUTPUT_CHARS = 12_000;

export class ToolFailed extends Error {}

const log = createLogger('chat-tools');

interface Tool<S extends z.ZodMiniType> {
  description: string;
  input: S;
  run(input: z.output<S>): Promise<unknown>;
}

const tool = <S extends z.ZodMiniType>(t: Tool<S>) => t;

// ── run_sql: a snapshot of the fleet in SQLite, rebuilt when older than this ──
export const SQL_SNAPSHOT_TTL_MS = 5 * 60_000;
export const SQL_ALERT_DAYS = 30;
let snapshot: { db: Promise<FleetDatabase>; at: number } | undefined;

/** The fleet as SQL tables, built from the dashboards' view plus rollups, alerts and issues. */
export async function fleetDatabase(now = new Date()): Promise<FleetDatabase> {
  if (snapshot && now.getTime() - snapshot.at < SQL_SNAPSHOT_TTL_MS) return snapshot.db;
  const previous = snapshot?.db;
  // The SQL worker starts while the snapshot's parts are read.
  const db = openFleetDatabase(
    (async () => {
      const view = await fleetView();
      // Through packed rollups (shared/db/README.md): 14 days of 10,000 clusters are 140,000 items. In shared
      // memory, so the SQL worker gets them without a copy (100 MB for 10,000 clusters).
      const [columns, alerts, issues] = await Promise.all([
        readFleetRollupColumns(windowDays(SQL_ROLLUP_DAYS, now), now, { shared: true }),
        listAlertsSince(new Date(now.getTime() - SQL_ALERT_DAYS * 86_400_000), now),
        listIssuesActiveSince(new Date(now.getTime() - SQL_ALERT_DAYS * 86_400_000)),
      ]);
      return { clusters: view.fleet.map((d) => d.cluster), scores: view.scores, risks: view.snapshots, rollups: columns, alerts, issues };
    })(),
  );
  snapshot = { db, at: now.getTime() };
  // A snapshot that could not be read or loaded is not kept: the next call reads the fleet again.
  db.then((opened) => opened.loaded).catch(() => {
    if (snapshot?.db === db) snapshot = undefined;
  });
  void previous?.then((old) => old.retire()).catch(() => undefined);
  return db;
}

/** For tests: forget the SQL snapshot (closing its worker). */
export async function dropFleetDatabase(): Promise<void> {
  const old = snapshot?.db;
  snapshot = undefined;
  await old?.then((db) => db.close()).catch(() => undefined);
}

// ── cluster lookup shared by cluster_info and analyze_logs ──
// Names are not unique (two customers may each have a `prod-1`): an id first, then a name that only one
// cluster has; a name several share is a choice the caller makes by id, never a guess that would answer
// for another customer's cluster.
function findCluster(view: FleetView, wanted: string) {
  const needle = wanted.trim().toLowerCase();
  const clusters = view.fleet.map((d) => d.cluster);
  const byId = clusters.find((c) => c.cluster_id === wanted.trim());
  if (byId) return byId;
  const ambiguous = (found: typeof clusters, how: string) =>
    new ToolFailed(
      `"${wanted}" ${how} ${found.length} clusters: ${found
        .slice(0, 10)
        .map((c) => `${c.cluster_name} (${c.customer_name}, id ${c.cluster_id})`)
        .join(', ')}. Give the id.`,
    );
  const exact = clusters.filter((c) => c.cluster_name.toLowerCase() === needle);
  if (exact.length === 1) return exact[0]!;
  if (exact.length > 1) throw ambiguous(exact, 'is the name of');
  const partial = clusters.filter((c) => c.cluster_name.toLowerCase().includes(needle));
  if (partial.length === 1) return partial[0]!;
  if (partial.length > 1) throw ambiguous(partial, 'matches');
  throw new ToolFailed(`No cluster named or with id "${wanted}". run_sql on the clusters table lists them.`);
}

// ── analyze_logs: group log events by error signature ──
const LOG_EVENTS_READ = 5000;
/**
 * What of a message its signature is made from. The signature keeps 300 characters; the patterns ran over whole
 * messages of up to 8,192, and 5,000 of them took 6.5 s of the chat's 27 s, where no tool timeout can interrupt.
 */
const SIGNATURE_SOURCE_CHARS = 1000;
/** A message with its variable parts (numbers, ids, quoted values, paths) replaced: what repeats. */
export function signatureOf(message: string): string {
  // A quoted value the cut went through ends where the cut is: what follows the cut is gone.
  const quoted = message.length > SIGNATURE_SOURCE_CHARS ? /"[^"]*(?:"|$)|'[^']*'/g : /"[^"]*"|'[^']*'/g;
  return sliceChars(message, SIGNATURE_SOURCE_CHARS)
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<id>')
    .replace(quoted, '<str>')
    .replace(/\b0x[0-9a-f]+\b|\b[0-9a-f]{12,}\b/gi, '<hex>')
    .replace(/(\/[\w.-]+){2,}/g, '<path>')
    .replace(/\d+(\.\d+)?/g, '<n>')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 300);
}

export function groupLogs(events: readonly LogRecord[], limit = 20) {
  const groups = new Map<string, { signature: string; count: number; levels: Set<string>; first: string; last: string; examples: string[] }>();
  for (const e of events) {
    const signature = signatureOf(e.message);
    let g = groups.get(signature);
    if (!g) groups.set(signature, (g = { signature, count: 0, levels: new Set(), first: e.at, last: e.at, examples: [] }));
    g.count++;
    g.levels.add(e.level);
    if (e.at < g.first) g.first = e.at;
    if (e.at > g.last) g.last = e.at;
    if (g.examples.length < 2 && !g.examples.includes(e.message)) g.examples.push(e.message.slice(0, 500));
  }
  return [...groups.values()]
    .sort((a, b) => b.count - a.count || (a.signature < b.signature ? -1 : 1))
    .slice(0, limit)
    .map((g) => ({ ...g, levels: [...g.levels].sort() }));
}

/** cluster_info's open issues read at most, most recently seen first: a cluster in an alert storm has hundreds. */
export const CLUSTER_INFO_OPEN_ISSUES = 50;

/**
 * The open issues that fit in the answer beside the rest (`used` characters of it), newest first, and a note
 * saying so when not all read do, or when the read was cut: the answer holds TOOL_OUTPUT_CHARS, and one cut
 * mid-JSON loses its end and tells the model nothing of what is missing.
 */
function openIssuesThatFit<T>(used: number, issues: T[]): { open_issues_note?: string; open_issues: T[] } {
  const room = TOOL_OUTPUT_CHARS - used - 200; // the keys, and the note
  let shown = 0;
  for (let size = 0; shown < issues.length; shown++) {
    size += JSON.stringify(issues[shown]).length + 1;
    if (size > room) break;
  }
  const read = issues.length === CLUSTER_INFO_OPEN_ISSUES ? `at least ${issues.length}` : String(issues.length);
  return {
    ...(shown < issues.length || issues.length === CLUSTER_INFO_OPEN_ISSUES
      ? { open_issues_note: `the ${shown} most recently seen of ${read} open issues; run_sql lists them all` }
      : {}),
    open_issues: issues.slice(0, shown),
  };
}

export const TOOLS = {
  run_sql: tool({
    description:
      'Run one read-only SQL SELECT (SQLite dialect) over a snapshot of the fleet: clusters, latest scores, risk, daily metric rollups ' +
      '(14 days), alerts (started in 30 days, or earlier and still firing) and issues (30 days). At most 200 rows come back. The schema follows.',
    input: TOOL_INPUTS.run_sql,
    async run({ sql }) {
      try {
        const { columns, rows, row_count, truncated, note } = await (await fleetDatabase()).query(sql);
        return { columns, rows, row_count, truncated, ...(note ? { note } : {}) };
      } catch (error) {
        if (error instanceof SqlRefused) throw new ToolFailed(error.message);
        throw error;
      }
    },
  }),
  cluster_info: tool({
    description: 'Everything about one cluster by name or id: inventory, unified and health scores with their reasons, risk snapshot, open issues.',
    input: TOOL_INPUTS.cluster_info,
    async run({ cluster: wanted }) {
      const view = await fleetView();
      const cluster = findCluster(view, wanted);
      const id = cluster.cluster_id;
      const issues = await listClusterOngoingIssues(id, CLUSTER_INFO_OPEN_ISSUES);
      const score = view.scores.find((s) => s.cluster_id === id);
      const { created_at: _c, updated_at: _u, ...inventory } = cluster;
      const answer = {
        inventory,
        unified_score: score && {
          overall_score: score.overall_score,
          tier_adjusted_score: score.tier_adjusted_score,
          classification: score.classification,
          top_risk: score.top_risk,
          risk_reasons: score.risk_reasons,
          suggested_actions: score.suggested_actions,
          metrics: score.metrics,
        },
        health: view.healthScores.find((h) => h.cluster_id === id) ?? null,
        risk: view.snapshots.find((r) => r.cluster_id === id) ?? null,
        scored_at: view.generatedAt,
      };
      const open = issues.map((i) => ({
        issue_id: i.issue_id,
        issue_name: i.issue_name,
        severity: i.severity,
        first_seen: i.first_seen,
        alert_count: i.alert_count,
        triage_status: i.triage_status,
        assignee: i.assignee,
      }));
      return { ...answer, ...openIssuesThatFit(JSON.stringify(answer).length, open) };
    },
  }),
  analyze_logs: tool({
    description:
      "A cluster's ingested log events over the last hours (logs are kept 7 days), grouped by error signature with counts, first and last time, and examples.",
    input: TOOL_INPUTS.analyze_logs,
    async run({ cluster: wanted, hours, level }) {
      const cluster = findCluster(await fleetView(), wanted);
      // The newest events first, so a cap drops the oldest; the answer says when it did.
      // Of that level only, filtered as read: a filter after the cap lost the older events of one level under a flood of others.
      const events = await listClusterLogs(
        cluster.cluster_id,
        new Date(Date.now() - hours * 3_600_000),
        LOG_EVENTS_READ,
        true,
        level === 'any' ? undefined : level,
      );
      return {
        cluster_name: cluster.cluster_name,
        hours,
        level,
        events: events.length,
        signatures: groupLogs(events),
        truncated: events.length === LOG_EVENTS_READ ? `only the newest ${LOG_EVENTS_READ} events were read; narrow the hours` : false,
      };
    },
  }),
  search_knowledge: tool({
    description:
      'Full-text search over the operations runbooks (compaction backlog, disk full, query error spikes, JVM heap pressure, slow queries, upgrades).',
    input: TOOL_INPUTS.search_knowledge,
    async run({ query, limit }) {
      // The runbook index (MiniSearch) is loaded by the first search, not by chat's cold start (issue 21 §4).
      const { searchKnowledge } = await import('../knowledge/search.js');
      return { hits: await searchKnowledge(query, limit) };
    },
  }),
} as const;

export type ToolName = keyof typeof TOOLS;

const SNAPSHOT_UNAVAILABLE = 'The SQL snapshot is unavailable right now; use the other tools.';

/**
 * The tools as the model sees them; run_sql's description carries the snapshot's schema. The schema is
 * awaited until `schemaBy` (epoch ms) at most: a snapshot still being read then (a month-long alert storm
 * is 100 MB of pages) must not eat the message's whole budget before the model is first called. The read
 * goes on, and run_sql (bounded by the tool loop) and the next message use it.
 */
export async function toolSpecs(schemaBy = Infinity): Promise<ToolSpec[]> {
  // A snapshot that cannot be built takes only run_sql down, not the chat.
  const reading = fleetDatabase().then(
    (db) => db.schema,
    (error: unknown) => {
      log.error('SQL snapshot unavailable', { error: String(error) });
      return SNAPSHOT_UNAVAILABLE;
    },
  );
  let timer: NodeJS.Timeout | undefined;
  const late =
    schemaBy === Infinity
      ? undefined
      : new Promise<string>((resolve) => {
          timer = setTimeout(
            () => {
              log.warn('SQL snapshot not read in time for this message; asked without its schema');
              resolve(SNAPSHOT_UNAVAILABLE);
            },
            Math.max(0, schemaBy - Date.now()),
          );
        });
  const schema = await (late ? Promise.race([reading, late]) : reading).finally(() => clearTimeout(timer));
  const inputs = await toolInputSchemas();
  return (Object.entries(TOOLS) as [ToolName, Tool<z.ZodMiniType>][]).map(([name, t]) => {
    const input_schema = inputs[name];
    if (!input_schema) throw new Error(`no input schema for the tool ${name} (${TOOL_SCHEMAS_FILE} is older than the code)`);
    return { name, description: name === 'run_sql' ? `${t.description}\n\n${schema}` : t.description, input_schema };
  });
}

/** Runs a tool call: its answer as text for the model, and whether it is an error. */
export async function runTool(name: string, input: unknown): Promise<{ content: string; is_error: boolean }> {
  // Own keys only: a model naming `constructor` or `toString` asks for no tool.
  const t = Object.hasOwn(TOOLS, name) ? (TOOLS as Record<string, Tool<z.ZodMiniType>>)[name] : undefined;
  if (!t) return { content: `There is no tool "${name}". Tools: ${Object.keys(TOOLS).join(', ')}.`, is_error: true };
  const parsed = t.input.safeParse(input);
  if (!parsed.success) {
    return {
      content: `Invalid input for ${name}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ')}`,
      is_error: true,
    };
  }
  try {
    const text = JSON.stringify(await t.run(parsed.data));
    return {
      content: text.length > TOOL_OUTPUT_CHARS ? `${sliceChars(text, TOOL_OUTPUT_CHARS)}… [cut at ${TOOL_OUTPUT_CHARS} characters: narrow the request]` : text,
      is_error: false,
    };
  } catch (error) {
    if (error instanceof ToolFailed) return { content: error.message, is_error: true };
    // Any other failure is ours, not the model's: logged, and answered so the conversation goes on.
    log.error('tool failed', { tool: name, error: String(error) });
    return { content: `${name} failed on the server side; try another way or say that the data is unavailable.`, is_error: true };
  }
}
