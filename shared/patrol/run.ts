// The patrol worker's job (issue 9): one scan under the lock (./lock.ts). The
// API trigger (./trigger.ts) takes the lock and creates the report before
// starting the worker; the schedule and the CLI invoke the worker directly,
// which then takes the lock itself. Whoever runs the scan heartbeats the lease
// and releases it in a finally; a crashed worker blocks the next scan for one
// lease at most, and the next taker marks its report failed.
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { heartbeatLock, lockHolder, releaseLock } from '../db/locks.js';
import { ConditionFailed } from '../db/client.js';
import { claimReport, createReport, finishReport, getReport, recordReportSpend } from '../db/patrol.js';
import { agentProvider } from '../llm/agent-budget.js';
import { LoopStopped, nothingSpent, type Spent } from '../llm/tool-loop.js';
import { LlmError } from '../llm/types.js';
import { createLogger } from '../log.js';
import { failStoppedReport, leaseMs, PATROL_LOCK, takeLock } from './lock.js';
import { SCHEDULE_TRIGGER } from './schedule.js';
import { gatherInputs, keptLists, llmScan, rulesScan, ScanFailed, type ScanOutcome } from './scan.js';

const log = createLogger('patrol');
/** The LLM's tool rounds end in time for an answer inside the worker's 15 minutes. */
const SCAN_DEADLINE_MS = 10 * 60_000;

export interface PatrolEvent {
  report_type?: string;
  triggered_by?: string;
  /** Set by the API trigger, which holds the lock for this report already. */
  report_id?: string;
}

/** The longest a worker waits out a dead holder's lease: the scan still needs its 10 minutes in the worker's 15. */
const DEAD_HOLDER_WAIT_MAX_MS = 3 * 60_000;

/**
 * The lock, when its holder missed a renewal (a crashed scan, whose lease still runs): waited out once, then
 * taken. A live holder renews every third of the lease, so one whose last renewal is older than that (and a few
 * seconds of slack) is dead. Lambda retries a crashed scheduled scan about a minute later, while the dead lease
 * still runs, and answering that retry `already_running` lost the scan until the next schedule. With the default
 * 120 s lease every such retry sees the missed renewal; with a lease over about 165 s some come too early to.
 */
async function takeLockFromDeadHolder(reportId: string): Promise<boolean> {
  const holder = await lockHolder(PATROL_LOCK);
  if (!holder) return takeLock(reportId); // released meanwhile
  const lease = leaseMs();
  const left = holder.expires_at - Date.now();
  if (left >= (lease * 2) / 3 - Math.min(5_000, lease / 6)) return false; // renewed on time: alive
  if (left > DEAD_HOLDER_WAIT_MAX_MS) {
    log.warn('the patrol lock holder missed its renewal, but its lease runs too long to wait out', { holder: holder.owner, left_ms: left });
    return false;
  }
  log.warn('the patrol lock holder missed its renewal; waiting for its lease to run out', { holder: holder.owner, wait_ms: left });
  await sleep(Math.max(0, left) + 50);
  return takeLock(reportId);
}

/**
 * The worker's job: one scan under the lock, its report completed or failed,
 * the lock released. Returns what it did (for the CLI and the logs).
 */
export async function runPatrolScan(event: PatrolEvent): Promise<{ status: 'completed' | 'failed' | 'already_running'; report_id: string }> {
  let reportId = event.report_id;
  if (!reportId) {
    reportId = randomUUID();
    if (!(await takeLock(reportId)) && !(await takeLockFromDeadHolder(reportId))) {
      return { status: 'already_running', report_id: (await lockHolder(PATROL_LOCK))?.owner ?? '' };
    }
    try {
      await createReport({ report_id: reportId, report_type: event.report_type ?? 'scheduled', triggered_by: event.triggered_by ?? SCHEDULE_TRIGGER });
    } catch (error) {
      await releaseLock(PATROL_LOCK, reportId);
      throw error;
    }
  }
  const owner = reportId;
  const workerId = randomUUID();
  try {
    await claimReport(owner, workerId);
  } catch (error) {
    if (error instanceof ConditionFailed) {
      // Lambda's retry of a scan that failed: failed again, so the event reaches the worker's failure queue
      // (a success here kept it out). Any other repeated delivery: another worker has it, or it completed.
      if ((await getReport(owner))?.status === 'failed') return { status: 'failed', report_id: owner };
      return { status: 'already_running', report_id: owner };
    }
    // The lock this worker took is its to free: its retry takes the lock again (a new report), where the lock
    // still held would answer it `already_running`. The trigger's lock and report stay for the event's retry.
    if (!event.report_id) await abandonReport(owner, 'internal error (see the patrol-worker logs)');
    throw error;
  }
  let lost = false;
  const heartbeat = setInterval(
    () => {
      heartbeatLock(PATROL_LOCK, owner, leaseMs()).catch((error: unknown) => {
        // Only a refused renewal says the lock is someone else's; any other failure (a throttle, a
        // reset, after the client's retries) proves nothing, and the next beat, a third of a lease later, tries again.
        if (error instanceof ConditionFailed) {
          lost = true;
          log.error('patrol lock lost', { report_id: owner });
        } else log.warn('patrol lock renewal failed; the next one tries again', { report_id: owner, error: String(error) });
      });
    },
    // A third of the lease, however short (a floor of 1 s let a 1 s lease lapse between beats).
    leaseMs() / 3,
  );
  const started = Date.now();
  // What the scan spent so far: a scan that fails after LLM calls still reports them (the ledger charged them).
  const meter: Meter = { model: '', spent: nothingSpent() };
  try {
    await heartbeatLock(PATROL_LOCK, owner, leaseMs()); // ours, or someone took over after our lease ran out
    // A lock lost mid-scan stops it before its next model call: the new holder is scanning already.
    const outcome = await scan(owner, event.triggered_by ?? SCHEDULE_TRIGGER, meter, () => lost);
    // Published only while the lock is still ours: a last renewal says so, whatever the beats met.
    if (lost || !(await stillHeld(owner))) throw new ScanFailed('the scan outlived its lock');
    const { result } = outcome;
    // flagged_count counts them all; the lists keep what the report's item holds (a large fleet's rules scan flags thousands).
    const kept = keptLists(result);
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
      clusters_flagged_parsed: kept.clusters_flagged,
      customer_summaries_parsed: kept.customer_summaries,
    }).catch((error: unknown) => {
      // Marked failed meanwhile by someone who found the lease lapsed (a reader, the next scan).
      throw error instanceof ConditionFailed ? new ScanFailed('the report was marked failed while the scan ran (its lease had lapsed)') : error;
    });
    return { status: 'completed', report_id: owner };
  } catch (error) {
    // Viewers read the reason: internal errors are logged in full and shown without their details.
    const reason =
      error instanceof LlmError
        ? `the language model failed: ${error.message}`
        : error instanceof ScanFailed
          ? error.message
          : error instanceof LoopStopped
            ? 'the scan outlived its lock: stopped before its next model call'
            : 'internal error (see the patrol-worker logs)';
    log.error('patrol scan failed', { report_id: owner, reason, error: String(error) });
    const spend = {
      model: meter.model,
      input_tokens: meter.spent.input_tokens,
      output_tokens: meter.spent.output_tokens,
      total_tokens: meter.spent.total_tokens,
      cost_usd: meter.spent.cost_usd,
    };
    await finishReport(owner, { status: 'failed', error: reason, duration_seconds: Math.round((Date.now() - started) / 100) / 10, ...spend })
      // Refused: someone marked the report failed first. The calls were paid for all the same.
      .catch((e: unknown) => (e instanceof ConditionFailed && meter.spent.calls > 0 ? recordReportSpend(owner, workerId, spend) : undefined))
      .catch((e: unknown) => log.error('patrol report not finished', { report_id: owner, error: String(e) }));
    return { status: 'failed', report_id: owner };
  } finally {
    clearInterval(heartbeat);
    // Best effort, as abandonReport's: a release that failed (after the client's retries) must not turn a finished
    // scan into a thrown one, which Lambda retried as a second full scan once the lease ran out. The lease frees it.
    await releaseLock(PATROL_LOCK, owner).catch((error: unknown) => log.error('patrol lock not released', { report_id: owner, error: String(error) }));
  }
}

/**
 * A report no worker will scan for: marked failed with `reason` (unless finished already), with what the ledger
 * charged for it (a scan stopped half-way, a service restarted under it), and its lock freed, so the next scan need
 * not wait a lease for it. Best effort: failing that, the lease ends and the next taker marks it.
 */
export async function abandonReport(reportId: string, reason: string): Promise<void> {
  try {
    await failStoppedReport(reportId, reason, { duration_seconds: 0 });
  } catch (error) {
    if (!(error instanceof ConditionFailed)) log.error('patrol report not marked failed', { report_id: reportId, error: String(error) });
  }
  await releaseLock(PATROL_LOCK, reportId).catch((error: unknown) => log.error('patrol lock not released', { report_id: reportId, error: String(error) }));
}

/**
 * abandonReport for a report no worker has claimed: the worker refused the event that names it. A report a worker
 * claimed is that worker's (a copied id in a hand-made event must not fail a live scan and free its lock); so is one
 * already finished. Best effort, as abandonReport.
 */
export async function abandonUnclaimedReport(reportId: string, reason: string): Promise<void> {
  try {
    await claimReport(reportId, randomUUID());
  } catch (error) {
    if (!(error instanceof ConditionFailed)) log.error('patrol report not claimed to be abandoned', { report_id: reportId, error: String(error) });
    return;
  }
  await abandonReport(reportId, reason);
}

/** Whether `owner` still holds the patrol lock (its lease renewed); other failures are thrown. */
async function stillHeld(owner: string): Promise<boolean> {
  try {
    await heartbeatLock(PATROL_LOCK, owner, leaseMs());
    return true;
  } catch (error) {
    if (error instanceof ConditionFailed) return false;
    throw error;
  }
}

interface Meter {
  model: string;
  spent: Spent;
}

/** The LLM scan when a provider is configured and the day's AI budget is not spent, else the rules engine (model `rules`, cost 0). */
async function scan(reportId: string, user: string, meter: Meter, shouldStop: () => boolean): Promise<ScanOutcome> {
  const inputs = await gatherInputs();
  const { provider, spent } = await agentProvider();
  if (!provider) {
    meter.model = 'rules';
    return { result: rulesScan(inputs, spent), model: 'rules', tool_rounds: 0, spent: meter.spent };
  }
  meter.model = provider.model;
  return llmScan(provider, inputs, { runId: reportId, source: 'agent', user }, Date.now() + SCAN_DEADLINE_MS, meter.spent, shouldStop);
}
