// The local stand-in for EventBridge: runs jobs in this process on a fixed
// interval. Like a rate() rule it does not catch up missed ticks; unlike
// EventBridge it never starts a job while its previous run is still going (a
// long patrol must not stack up locally), which it logs as skipped.
import type { Logger } from '../../shared/log.js';

export interface ScheduledJob {
  name: string;
  everyMs: number;
  run: () => Promise<unknown>;
}

export interface LocalSchedules {
  /** Runs one job now (waits for a run in progress first, never two at once); resolves with its result. */
  runNow(name: string): Promise<unknown>;
  /** Clears the timers and waits (up to graceMs) for runs in progress. */
  stop(graceMs?: number): Promise<void>;
}

export function startLocalSchedules(jobs: readonly ScheduledJob[], log: Logger): LocalSchedules {
  const running = new Map<string, Promise<unknown>>();
  let stopped = false;

  const start = (job: ScheduledJob): Promise<unknown> => {
    const started = Date.now();
    const run = job
      .run()
      .then(
        (result) => {
          log.info('scheduled run finished', { job: job.name, duration_ms: Date.now() - started });
          return result;
        },
        (error: unknown) => {
          log.error('scheduled run failed', { job: job.name, error: error instanceof Error ? error.message : String(error) });
          return undefined;
        },
      )
      // Only its own entry: a run started after it (runNow) must stay known as running.
      .finally(() => {
        if (running.get(job.name) === run) running.delete(job.name);
      });
    running.set(job.name, run);
    return run;
  };

  const timers = jobs.map((job) =>
    setInterval(() => {
      if (stopped) return;
      if (running.has(job.name)) return log.warn('scheduled run skipped: the previous one is still running', { job: job.name });
      void start(job);
    }, job.everyMs),
  );

  return {
    async runNow(name) {
      const job = jobs.find((j) => j.name === name);
      if (!job) throw new Error(`no scheduled job ${name}`);
      // Two callers waiting on the same run must not both start one: each waits until none is going.
      for (let going = running.get(name); going; going = running.get(name)) await going;
      return stopped ? undefined : start(job);
    },
    async stop(graceMs = 10_000) {
      stopped = true;
      timers.forEach(clearInterval);
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((r) => (timer = setTimeout(r, graceMs)));
      await Promise.race([Promise.all(running.values()), grace]);
      clearTimeout(timer);
    },
  };
}
