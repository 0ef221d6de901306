// Agent tasks and investigations (shared/agents/): retry spacing, the task
// lease, a worker run's budget, one investigation's time.
import { defineSettings, seconds } from './env.js';

/**
 * The end of an investigation's time kept for its final answer (tools stop this long before the deadline).
 * So an investigation needs twice this (a minute of tools at least), and the lease twice that (it is capped
 * at half the lease): with less, the first model call was already past the tools' cut-off and no tool ever ran.
 */
export const INVESTIGATION_ANSWER_RESERVE_SECONDS = 60;
const MIN_INVESTIGATION_SECONDS = 2 * INVESTIGATION_ANSWER_RESERVE_SECONDS;

export const agentSettings = defineSettings(
  'agents',
  () => ({
    /** The wait before a failed attempt is retried, doubled per attempt (0: at once). */
    AGENT_RETRY_SECONDS: seconds('AGENT_RETRY_SECONDS', 60, 0, 86_400),
    /** A running task whose claim is older than this is taken over (its worker is presumed dead). */
    AGENT_TASK_LEASE_SECONDS: seconds('AGENT_TASK_LEASE_SECONDS', 600, 2 * MIN_INVESTIGATION_SECONDS, 86_400),
    /** How long a worker run keeps claiming tasks. */
    AGENT_WORKER_BUDGET_SECONDS: seconds('AGENT_WORKER_BUDGET_SECONDS', 600, 1, 900),
    /**
     * How long one investigation may take (capped at half the lease, so a live worker is never overtaken). At least
     * twice the answer's reserve (above). At most
     * 600: the worker claims a task only while one more investigation fits before its 900 s timeout (less 30 s), so
     * 870 or more left it no time to claim any, and every task stayed pending.
     */
    AGENT_INVESTIGATION_SECONDS: seconds('AGENT_INVESTIGATION_SECONDS', 240, MIN_INVESTIGATION_SECONDS, 600),
  }),
  {
    derive: (v) => ({
      retryBaseMs: v.AGENT_RETRY_SECONDS * 1000,
      leaseMs: v.AGENT_TASK_LEASE_SECONDS * 1000,
      budgetMs: v.AGENT_WORKER_BUDGET_SECONDS * 1000,
      investigationMs: Math.min(v.AGENT_INVESTIGATION_SECONDS, v.AGENT_TASK_LEASE_SECONDS / 2) * 1000,
    }),
  },
);
