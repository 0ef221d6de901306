// Agent tasks (issue 10): after each score refresh the clusters that meet the
// health rules' ai_trigger get a pending task (at most one open task per
// cluster, none within the cooldown: the per-cluster guard in
// shared/db/investigations.ts); the agent worker claims tasks one at a time
// (run-tasks.ts: conditional update, a lease for crashed workers), investigates,
// and closes each one done (with its investigation) or, after MAX_ATTEMPTS,
// failed. This module is the half the recompute worker runs, with the settings
// both halves read; it loads no investigator (the chat tools, the SQL snapshot).
import { randomUUID } from 'node:crypto';
import { createTask, firstOpenTask, isStale } from '../db/investigations.js';
import { agentSettings } from '../config/agents.js';
import { mapLimit } from '../db/client.js';
import { createLogger } from '../log.js';
import type { ScoringRules } from '../rules/schemas.js';
import type { FleetClusterScore } from '../scoring/fleet-score.js';
import type { FleetView } from '../scoring/fleet-view.js';
import { invokeWorker } from '../worker-invoke.js';

const log = createLogger('agents');

/**
 * The wait before a failed attempt is retried: AGENT_RETRY_SECONDS (default 60)
 * doubled per attempt, so an LLM outage does not use up all attempts at once.
 */
export function retryDelayMs(attempts: number): number {
  return agentSettings().retryBaseMs * 2 ** Math.max(0, attempts - 1);
}

/** A running task whose claim is older than this is taken over (its worker is presumed dead). */
export const leaseMs = () => agentSettings().leaseMs;
/** How long a worker run keeps claiming tasks. */
export const budgetMs = () => agentSettings().budgetMs;
/** How long one investigation may take (well inside the lease, so a live worker is never overtaken). */
export const investigationMs = () => agentSettings().investigationMs;

type AiTrigger = ScoringRules['ai_trigger'];

export const meetsTrigger = (s: FleetClusterScore, trigger: AiTrigger) =>
  (trigger.tiers as readonly string[]).includes(s.customer_tier) && s.tier_adjusted_score < trigger.below_score;

/** "tier S, tier-adjusted score 41.2 < 60: Disk Usage at 93 (red >= 90); …" */
export function triggerReason(s: FleetClusterScore, trigger: AiTrigger): string {
  const reasons = s.risk_reasons.length ? s.risk_reasons : [`top risk ${s.top_risk}`];
  return `tier ${s.customer_tier}, tier-adjusted score ${s.tier_adjusted_score} < ${trigger.below_score}: ${reasons.slice(0, 3).join('; ')}${reasons.length > 3 ? '; …' : ''}`.slice(
    0,
    600,
  );
}

const TIER_WEIGHT: Record<string, number> = { S: 300, A: 200, B: 100 };

/** Tier first (S 300, A 200, B 100), then points below the threshold (0..99): higher is more urgent. */
export function taskPriority(s: FleetClusterScore, trigger: AiTrigger): number {
  return (TIER_WEIGHT[s.customer_tier] ?? 0) + Math.min(99, Math.max(0, Math.round(trigger.below_score - s.tier_adjusted_score)));
}

/**
 * Creates a pending task for each cluster meeting ai_trigger, unless one is
 * open for it or its last one is within the cooldown (`skipped`); safe to
 * call concurrently. Starts the agent worker when a task was created or
 * tasks are still waiting (a worker stopped at its budget, a lost invocation).
 * Call after every score refresh with the refreshed view.
 */
export async function createAgentTasks(view: FleetView, now = new Date()): Promise<{ created: number; skipped: number }> {
  const trigger = view.health.rules.ai_trigger;
  const due = view.scores.filter((s) => meetsTrigger(s, trigger));
  const cooldownStart = new Date(now.getTime() - trigger.cooldown_hours * 3_600_000).toISOString();
  const made = await mapLimit(due, 8, (s) =>
    createTask(
      {
        task_id: randomUUID(),
        cluster_id: s.cluster_id,
        cluster_name: s.cluster_name,
        customer_name: s.customer_name,
        customer_tier: s.customer_tier,
        trigger_reason: triggerReason(s, trigger),
        priority: taskPriority(s, trigger),
        created_at: now.toISOString(),
      },
      cooldownStart,
    ),
  );
  const created = made.filter(Boolean).length;
  const waiting = created > 0 || (await firstOpenTask((t) => t.status === 'pending' || isStale(t, leaseMs(), now))) !== undefined;
  if (waiting) {
    // The tasks are stored: if the worker cannot be started now, the next refresh starts it.
    await invokeWorker('agent-worker', {}).catch((error: unknown) => log.error('agent worker not started', { error: String(error) }));
  }
  if (due.length) log.info('agent tasks', { due: due.length, created });
  return { created, skipped: due.length - created };
}
