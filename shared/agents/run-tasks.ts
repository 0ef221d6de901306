// The agent worker's half of agent tasks (tasks.ts creates them after each refresh):
// claims tasks one at a time, most urgent first (a conditional update, with a lease
// for crashed workers), investigates each (investigate.ts: the chat tools, run_sql
// among them) and closes it done, or retried later, or failed after MAX_ATTEMPTS.
// Apart from tasks.ts so that the recompute worker's bundle carries none of it.
import { randomUUID } from 'node:crypto';
import { ConditionFailed } from '../db/client.js';
import {
  claimTask,
  completeTask,
  expireTask,
  failTaskAttempt,
  firstOpenTask,
  isStale,
  MAX_ATTEMPTS,
  type ClaimedTask,
  type OpenTaskState,
} from '../db/investigations.js';
import { LlmError } from '../llm/types.js';
import { nothingSpent } from '../llm/tool-loop.js';
import { createLogger, errorFields } from '../log.js';
import { ClusterLeftFleet, investigate, InvestigationFailed } from './investigate.js';
import { budgetMs, investigationMs, leaseMs, retryDelayMs } from './tasks.js';

const log = createLogger('agents');

export interface WorkerSummary {
  owner: string;
  claimed: number;
  done: number;
  retried: number;
  /** Tasks whose last attempt failed: the run then throws (functions/agent-worker.ts), for the alarms to see. */
  failed: number;
  /** Tasks ended because their cluster left the fleet: an ordinary decommission, which no alarm should page for. */
  dropped: number;
  /** Claims this run lost to another worker, or finished tasks whose claim had been taken over. */
  lost: number;
  investigations: string[];
  /** Why the run ended: no claimable task left, or the time budget spent. */
  stopped: 'empty' | 'budget';
  duration_ms: number;
}

/** What every role reads as a task's last error: internal errors only by kind (their text may name the account, its roles and tables), as the patrol does. */
const reasonOf = (error: unknown) =>
  error instanceof LlmError
    ? `the language model failed: ${error.message}`
    : error instanceof InvestigationFailed
      ? error.message
      : 'internal error (see the agent-worker logs)';

/** Claims and investigates tasks, most urgent first, until none is claimable or the budget is spent. */
export async function runAgentTasks(options: { budgetMs?: number } = {}): Promise<WorkerSummary> {
  const started = Date.now();
  const budget = options.budgetMs ?? budgetMs();
  const owner = randomUUID();
  const summary: WorkerSummary = {
    owner,
    claimed: 0,
    done: 0,
    retried: 0,
    failed: 0,
    dropped: 0,
    lost: 0,
    investigations: [],
    stopped: 'empty',
    duration_ms: 0,
  };
  // The index may lag a write by a moment: a task another worker took can still look pending (skip it once
  // its claim failed), and one this run sent back to pending can still look running (retry it by id).
  const lostClaims = new Set<string>();
  for (;;) {
    if (Date.now() - started >= budget) {
      summary.stopped = 'budget';
      break;
    }
    const now = new Date();
    const due = (t: OpenTaskState) => !t.not_before || t.not_before <= now.toISOString();
    const next = await firstOpenTask((t) => !lostClaims.has(t.task_id) && ((t.status === 'pending' && due(t)) || isStale(t, leaseMs(), now)));
    if (next?.status === 'running' && next.attempts >= MAX_ATTEMPTS) {
      // Its worker died on the last attempt: nothing left to retry.
      if (await expireTask(next, now)) summary.failed++;
      else lostClaims.add(next.task_id);
      continue;
    }
    if (!next) break;
    const task = await claimTask(next.task_id, owner, leaseMs(), now);
    if (!task) {
      lostClaims.add(next.task_id);
      summary.lost++;
      continue;
    }
    summary.claimed++;
    await work(task, summary);
  }
  summary.duration_ms = Date.now() - started;
  return summary;
}

/** One attempt at one claimed task, closed one way or the other; returns the task's new status. */
async function work(task: ClaimedTask, summary: WorkerSummary): Promise<'done' | 'pending' | 'failed' | 'lost'> {
  // The attempt's id is on the task from its claim: its model calls carry it in the ledger, so a worker killed
  // mid-attempt leaves what it spent findable by whoever finds the attempt stopped.
  const investigationId = task.attempt_id;
  // This attempt's model calls: kept on the task when it fails, so the investigation that ends the task counts them.
  const spent = nothingSpent();
  try {
    const investigation = await investigate(task, { investigationId, deadline: Date.now() + investigationMs(), spent });
    await completeTask(task, investigation);
    summary.done++;
    summary.investigations.push(investigationId);
    return 'done';
  } catch (error) {
    if (error instanceof ConditionFailed) {
      // Our claim was taken over after the lease: the other worker owns the task now.
      log.warn('agent task claim lost', { task_id: task.task_id, attempt: task.attempts });
      summary.lost++;
      return 'lost';
    }
    const reason = reasonOf(error);
    const gone = error instanceof ClusterLeftFleet;
    (gone ? log.warn : log.error)(gone ? 'agent task dropped' : 'agent task attempt failed', {
      task_id: task.task_id,
      attempt: task.attempts,
      reason,
      ...errorFields(error),
    });
    try {
      const now = new Date();
      const status = await failTaskAttempt(
        task,
        reason,
        !(error instanceof InvestigationFailed) || error.retryable,
        now,
        new Date(now.getTime() + retryDelayMs(task.attempts)),
        spent,
      );
      if (status === 'failed') summary[gone ? 'dropped' : 'failed']++;
      else summary.retried++;
      return status;
    } catch (failure) {
      if (!(failure instanceof ConditionFailed)) throw failure;
      summary.lost++;
      return 'lost';
    }
  }
}
