// Running patrol scans one at a time (issue 9). The lock (shared/db/locks.ts)
// is held by the report being produced: its owner is the report id. The API
// trigger takes the lock, creates the report, starts the worker and waits a
// while; the schedule and the CLI invoke the worker directly, which then takes
// the lock itself. Whoever runs the scan heartbeats the lease and releases it
// in a finally; a crashed worker blocks the next scan for one lease at most,
// and the next taker marks its report failed.
import { randomUUID } from 'node:crypto';
import type { Caller } from '../auth/caller.js';
import { writeAudit } from '../db/audit.js';
import { ConditionFailed } from '../db/client.js';
import { acquireLock, heartbeatLock, lockHolder, releaseLock } from '../db/locks.js';
import { createReport, finishReport, getReport } from '../db/patrol.js';
import type { Principal } from '../http/route.js';
import { llmProvider } from '../llm/provider.js';
import { LlmError } from '../llm/types.js';
import { createLogger } from '../log.js';
import { invokeWorker } from '../worker-invoke.js';
import { gatherInputs, llmScan, rulesScan, ScanFailed, type ScanOutcome } from './scan.js';

export const PATROL_LOCK = 'patrol';
const log = createLogger('patrol');

/** The lease a scan holds; heartbeats renew it every third of it. */
export const leaseMs = () => Number(process.env.PATROL_LEASE_SECONDS ?? 120) * 1000;
/** How long the trigger waits for the scan before answering 202 (under API Gateway's 30 s). */
export const waitMs = () => Math.min(28, Number(process.env.PATROL_WAIT_SECONDS ?? 25)) * 1000;

export interface PatrolEvent {
  report_type?: string;
  triggered_by?: string;
  /** Set by the API trigger, which holds the lock for this report already. */
  report_id?: string;
}

/** Takes the lock for a new report; when it replaces a crashed holder, that holder's report is marked failed. */
async function takeLock(reportId: string): Promise<boolean> {
  const { acquired, replaced } = await acquireLock(PATROL_LOCK, reportId, leaseMs());
  if (replaced) {
    await finishReport(replaced.owner, { status: 'failed', error: 'the scan stopped without finishing (its worker did not renew the lock)' }).catch((error: unknown) => {
      if (!(error instanceof ConditionFailed)) throw error; // already finished, or no such report
    });
  }
  return acquired;
}

/**
 * The worker's job: one scan under the lock, its report completed or failed,
 * the lock released. Returns what it did (for the CLI and the logs).
 */
export async function runPatrolScan(event: PatrolEvent): Promise<{ status: 'completed' | 'failed' | 'already_running'; report_id: string }> {
  let reportId = event.report_id;
  if (!reportId) {
    reportId = randomUUID();
    if (!(await takeLock(reportId))) return { status: 'already_running', report_id: (await lockHolder(PATROL_LOCK))?.owner ?? '' };
    await createReport({ report_id: reportId, report_type: event.report_type ?? 'scheduled', triggered_by: event.triggered_by ?? 'schedule' });
  }
  const owner = reportId;
  let lost = false;
  const heartbeat = setInterval(() => {
    heartbeatLock(PATROL_LOCK, owner, leaseMs()).catch((error: unknown) => {
      lost = true;
      log.error('patrol lock lost', { report_id: owner, error: String(error) });
    });
  }, Math.max(1000, leaseMs() / 3));
  const started = Date.now();
  try {
    await heartbeatLock(PATROL_LOCK, owner, leaseMs()); // ours, or someone took over after our lease ran out
    const outcome = await scan(owner, event.triggered_by ?? 'schedule');
    if (lost) throw new ScanFailed('the scan outlived its lock');
    const { result } = outcome;
    await finishReport(owner, {
      status: 'completed',
      model: outcome.model,
      input_tokens: outcome.spent.input_tokens,
      output_tokens: outcome.spent.output_tokens,
      total_tokens: outcome.spent.total_tokens,
      cost_usd: outcome.spent.cost_usd,
      duration_seconds: Math.round((Date.now() - started) / 100) / 10,
      tool_rounds: outcome.tool_rounds,
      fleet_narrative: result.narrative,
      flagged_count: result.clusters_flagged.length,
      fleet_summary_parsed: result.fleet_summary,
      clusters_flagged_parsed: result.clusters_flagged,
      customer_summaries_parsed: result.customer_summaries,
    });
    return { status: 'completed', report_id: owner };
  } catch (error) {
    const reason = error instanceof LlmError ? `the language model failed: ${error.message}` : error instanceof ScanFailed ? error.message : `internal error: ${String(error)}`;
    log.error('patrol scan failed', { report_id: owner, reason });
    await finishReport(owner, { status: 'failed', error: reason, duration_seconds: Math.round((Date.now() - started) / 100) / 10 }).catch(() => undefined);
    return { status: 'failed', report_id: owner };
  } finally {
    clearInterval(heartbeat);
    await releaseLock(PATROL_LOCK, owner);
  }
}

/** The LLM scan when a provider is configured, else the rules engine (model `rules`, cost 0). */
async function scan(reportId: string, user: string): Promise<ScanOutcome> {
  const inputs = await gatherInputs();
  const provider = llmProvider();
  if (!provider) {
    return { result: rulesScan(inputs), model: 'rules', tool_rounds: 0, spent: { input_tokens: 0, output_tokens: 0, total_tokens: 0, cost_usd: 0, calls: 0 } };
  }
  return llmScan(provider, inputs, { runId: reportId, source: 'agent', user });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** POST /api/patrol/trigger. */
export async function triggerPatrol(principal: Principal, reportType: string, caller: Caller) {
  const reportId = randomUUID();
  if (!(await takeLock(reportId))) return { status: 'already_running' as const, report_id: (await lockHolder(PATROL_LOCK))?.owner ?? null };
  try {
    await createReport({ report_id: reportId, report_type: reportType, triggered_by: principal.username });
    await writeAudit({ actor: principal.username, role: principal.role, action: 'patrol_trigger', target: reportId, detail: { report_type: reportType }, ip: caller.ip, user_agent: caller.userAgent });
    await invokeWorker('patrol-worker', { report_id: reportId, report_type: reportType, triggered_by: principal.username });
  } catch (error) {
    await finishReport(reportId, { status: 'failed', error: `the scan could not start: ${String(error)}` }).catch(() => undefined);
    await releaseLock(PATROL_LOCK, reportId);
    throw error;
  }
  const deadline = Date.now() + waitMs();
  for (;;) {
    const report = await getReport(reportId);
    if (report?.status === 'completed') {
      return {
        status: 'completed' as const, report_id: reportId, tool_rounds: report.tool_rounds, total_tokens: report.total_tokens,
        duration_seconds: report.duration_seconds, message: `Patrol ${report.model === 'rules' ? '(rules engine) ' : ''}flagged ${report.flagged_count} cluster${report.flagged_count === 1 ? '' : 's'}.`,
      };
    }
    if (report?.status === 'failed') return { status: 'failed' as const, report_id: reportId, message: report.error ?? 'the scan failed' };
    if (Date.now() >= deadline) return { status: 'running' as const, report_id: reportId, message: 'The scan is still running: poll GET /api/patrol/{report_id}.' };
    await sleep(250);
  }
}
