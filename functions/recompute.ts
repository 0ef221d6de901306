// recompute: the worker EventBridge starts every 15 minutes (the scheduled run) and the refresh and
// recompute routes start with `{ refresh_id, kinds }` (a route's run). What each run does, and why, is
// shared/recompute.ts.
import type * as z from '../shared/zod.js';
import { workerHandler } from '../shared/log.js';
import { type InvocationTime, RefreshEvent, refreshRun, scheduledRun } from '../shared/recompute.js';

type LambdaContext = Parameters<ReturnType<typeof workerHandler>>[1] & InvocationTime;

// Its log lines (and the grouping and agent modules' lines during the run) carry the run's ids.
export const handler = workerHandler(
  'recompute',
  async (event: unknown, context?: InvocationTime): Promise<unknown> => {
    // The schedule's event names no refresh; one that does must be whole.
    const named = event !== null && typeof event === 'object' && 'refresh_id' in event;
    return named ? refreshRun(RefreshEvent.parse(event), context) : scheduledRun();
  },
  (event) => event.refresh_id,
) as {
  /** A refresh route's run. */
  (event: z.input<typeof RefreshEvent> & { correlation_id?: string }, context?: LambdaContext): ReturnType<typeof refreshRun>;
  /** The scheduled run (`{}`). */
  (event?: unknown, context?: LambdaContext): ReturnType<typeof scheduledRun>;
};
