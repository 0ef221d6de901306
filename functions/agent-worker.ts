// agent-worker: claims pending agent tasks, investigates each cluster and
// writes the investigation (issue 10). Invoked asynchronously after a score
// refresh created tasks or left some waiting (createAgentTasks, every recompute); several runs at
// once are safe (each task is claimed by one). Any event is accepted; an
// optional `budget_seconds` shortens the run. A run in which a task failed for good (its
// last attempt) ends by throwing, as a failed patrol scan does: the failure queue and the
// Errors alarm see it, where "completed" let revoked model access stop investigations silently.
// A task whose cluster left the fleet is dropped, not failed: a decommission has nothing to fix.
import type { Context } from 'aws-lambda';
import * as z from '../shared/zod.js';
import { runAgentTasks } from '../shared/agents/run-tasks.js';
import { budgetMs, investigationMs } from '../shared/agents/tasks.js';
import { createLogger, workerHandler } from '../shared/log.js';

const log = createLogger('agent-worker');

/** Some task's last attempt failed this run: each is logged with its reason ('agent task attempt failed'). */
export class AgentTasksFailed extends Error {
  override name = 'AgentTasksFailed';
}

const AgentEvent = z.looseObject({ budget_seconds: z.optional(z.number().check(z.positive(), z.lte(900))) });

// Its log lines carry the run's ids; a run started by a request carries that request's correlation id.
export const handler = workerHandler('agent-worker', async (event: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
  const parsed = AgentEvent.safeParse(event ?? {});
  if (!parsed.success) {
    log.error('refused an invalid event', { issues: parsed.error.issues.slice(0, 3).map((i) => i.message) });
    return { status: 'refused', reason: parsed.error.issues[0]?.message };
  }
  let budget = parsed.data.budget_seconds !== undefined ? parsed.data.budget_seconds * 1000 : budgetMs();
  // On Lambda, the last task claimed must still finish before the function times out.
  const remaining = context?.getRemainingTimeInMillis?.();
  if (remaining !== undefined) budget = Math.min(budget, remaining - investigationMs() - 30_000);
  const summary = await runAgentTasks({ budgetMs: Math.max(0, budget) });
  log.info('agent tasks processed', { ...summary });
  if (summary.failed > 0) throw new AgentTasksFailed(`${summary.failed} agent task(s) failed on their last attempt (the log names why)`);
  return { status: 'completed', ...summary };
});
