// Background Lambdas (no HTTP route): what each may touch and when it runs on
// its own. The CDK stack turns `schedule` into EventBridge rules; `npm start`
// runs the same timetable in-process (infra/local/schedules.ts).
import type { GroupGrant, TableAccess } from './http/route.js';
import type { Lease, TableName } from './db/tables.js';
import type { ConfigConcern } from './config/concerns.js';
import { RUN_SQL_MEMORY_MB } from './function-memory.js';
import { PATROL_EVERY_MINUTES, SCHEDULE_TRIGGER } from './patrol/schedule.js';

export interface WorkerDeclaration {
  readonly summary: string;
  readonly tables: Partial<Record<TableName, TableAccess>>;
  /** With table `locks`: the lease locks it may touch (shared/db/tables.ts LEASES). */
  readonly leases?: readonly Lease[];
  readonly grants?: readonly GroupGrant[];
  /** Configuration concerns this worker reads beyond `core` (shared/config/concerns.ts). */
  readonly config?: readonly ConfigConcern[];
  /** Lambda timeout in seconds (workers run beyond API Gateway's 30 s). */
  readonly timeoutSeconds: number;
  /** Lambda memory in MB, chosen from a measured peak with headroom; the stack's default (1024) when absent. */
  readonly memoryMb?: number;
  /**
   * The Lambda's NODE_OPTIONS where they are not every Lambda's (`LAMBDA_NODE_OPTIONS` in infra/bundling.ts,
   * a 64 MB young generation); `''` runs V8's defaults. Chosen from measured runs, like `memoryMb`.
   */
  readonly nodeOptions?: string;
  /** Run on a timetable (EventBridge on AWS, timers locally) with this event. */
  readonly schedule?: WorkerSchedule;
}

export interface WorkerSchedule {
  readonly everyMinutes: number;
  readonly description: string;
  /** The event the schedule sends; `{}` when absent. */
  readonly event?: Readonly<Record<string, unknown>>;
}

export const WORKERS = {
  'patrol-worker': {
    summary: 'Runs one AI patrol scan under the patrol lease lock',
    tables: {
      patrol: 'readwrite',
      locks: 'readwrite',
      'llm-usage': 'readputupdate',
      clusters: 'read',
      metrics: 'read',
      alerts: 'read',
      scores: 'read',
      issues: 'read',
      'ai-issues': 'read',
      rules: 'read',
      logs: 'read',
    },
    leases: ['patrol'],
    grants: ['bedrock:invoke'],
    config: ['patrol', 'llm', 'llm-pricing', 'agent-budget'],
    timeoutSeconds: 900,
    memoryMb: RUN_SQL_MEMORY_MB,
    schedule: {
      everyMinutes: PATROL_EVERY_MINUTES,
      description: 'Scheduled AI patrol scan',
      event: { report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER },
    },
  },
  // No timetable of its own: recompute invokes it after creating agent tasks, locally as on AWS.
  'agent-worker': {
    summary: 'Claims agent tasks and writes investigations',
    tables: {
      investigations: 'readputupdate',
      'llm-usage': 'readputupdate',
      clusters: 'read',
      metrics: 'read',
      alerts: 'read',
      scores: 'read',
      issues: 'read',
      rules: 'read',
      logs: 'read',
    },
    grants: ['bedrock:invoke'],
    config: ['agents', 'llm', 'llm-pricing', 'agent-budget'],
    timeoutSeconds: 900,
    memoryMb: RUN_SQL_MEMORY_MB,
  },
  // Pulls metrics (and optionally the inventory) from the Prometheus query API the metric-sources rule set names.
  'metrics-puller': {
    summary: 'Pulls the fleet metrics from Prometheus with PromQL into the daily rollups',
    // What the pull calls, no more: rollup days put and their pack counters updated, inventory upserts and
    // write counters by update, the generation marker bumped; it deletes and batch-writes none of these.
    tables: {
      'metric-pulls': 'readwrite',
      metrics: 'readputupdate',
      clusters: 'readupdate',
      locks: 'readwrite',
      scores: 'readupdate',
      rules: 'read',
      // Update: the names on a renamed cluster's issues (shared/issues/renames.ts), and the issues' marker after them.
      issues: 'readupdate',
    },
    leases: ['metrics-puller'],
    grants: ['aps:query'],
    config: ['prometheus'],
    timeoutSeconds: 600,
    schedule: { everyMinutes: 5, description: 'Pull of the fleet metrics from Prometheus (metric-sources rule set)' },
  },
  recompute: {
    summary: 'Scheduled refresh of scores, risk and issue grouping',
    tables: {
      scores: 'readwrite',
      // Releases a route's refresh claim when the run ends (shared/scoring/refresh-claim.ts).
      locks: 'readwrite',
      issues: 'readwrite',
      'ai-issues': 'readwrite',
      investigations: 'readwrite',
      'llm-usage': 'readputupdate',
      // Write: the refresh packs the inventory and the settled days it had to read as items (shared/db/clusters.ts, rollup-packs.ts).
      clusters: 'readwrite',
      metrics: 'readwrite',
      // Update: alerts unheard for 35 days leave the firing index (shared/db/alerts.ts retireUnheardFiring); no put, batch write or delete.
      alerts: 'readupdate',
      rules: 'read',
    },
    leases: ['refresh'],
    // invoke:recompute: a queued route run waits at most a minute per invocation, then a new one waits on (functions/recompute.ts).
    grants: ['bedrock:invoke', 'invoke:agent-worker', 'invoke:recompute'],
    config: ['agents', 'llm', 'llm-pricing', 'agent-budget'],
    timeoutSeconds: 300,
    // One full refresh of 10,000 clusters peaked at 661–734 MB RSS in a fresh process before packed rollups, 493–508 MB
    // after (`npm run bench -- refresh-memory`, 2026-11-25, minified bundle with the Lambdas' Node options; the first
    // refresh after a bulk load, which reads the items and builds the packs); 335 MB with its own Node options below
    // (2026-11-30, a refresh from packs). 1536 MB puts those peaks at 22–33%, under issue 21's 60%, with room for a
    // larger fleet, and buys ~0.87 vCPU for the refresh (its time is CPU-bound).
    memoryMb: 1536,
    // V8's own young generation (16 MB semi-spaces), not the Lambdas' 64 MB: a refresh keeps what it builds until it has
    // persisted it, and a 64 MB young generation copies all of that between semi-spaces before promoting it. Measured
    // (`npm run bench -- scoring refresh-memory`, 10,000 clusters, 2026-11-30): a refresh in a fresh process 2.19 → 1.61 s
    // on Node 20 and 1.63 → 1.41 s on Node 22, the next one 1.28 → 1.02 s / 0.91 → 0.83 s, peak RSS 469 → 336 MB. Only a
    // container's fourth refresh and later were faster with 64 MB (≈ 0.1 s on Node 22); at one run per 15 minutes most
    // runs are a container's first or second. The API groups keep 64 MB: they compute the view again every minute in a
    // warm container, where it halves the engine's time (the engine bench).
    nodeOptions: '',
    schedule: { everyMinutes: 15, description: 'Refresh of scores, risk, issue and AI grouping, and agent tasks' },
  },
} as const satisfies Record<string, WorkerDeclaration>;

export type WorkerName = keyof typeof WORKERS;

/** The workers that run on a timetable, with their schedules. */
export function scheduledWorkers(): { name: WorkerName; schedule: WorkerSchedule }[] {
  return Object.entries(WORKERS as Record<WorkerName, WorkerDeclaration>).flatMap(([name, worker]) =>
    worker.schedule ? [{ name: name as WorkerName, schedule: worker.schedule }] : [],
  );
}

/** EventBridge's rate expression for a whole number of minutes (singular unit for 1, as EventBridge requires). */
export function rateExpression(everyMinutes: number): string {
  if (!Number.isInteger(everyMinutes) || everyMinutes < 1) throw new Error(`schedule interval must be a whole number of minutes ≥ 1, not ${everyMinutes}`);
  const [value, unit] =
    everyMinutes % 1440 === 0 ? [everyMinutes / 1440, 'day'] : everyMinutes % 60 === 0 ? [everyMinutes / 60, 'hour'] : [everyMinutes, 'minute'];
  return `rate(${value} ${unit}${value === 1 ? '' : 's'})`;
}
