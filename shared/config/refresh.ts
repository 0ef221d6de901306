// Refresh and recompute routes (issue 21 §2): how long they wait for the recompute worker.
import { defineSettings, seconds } from './env.js';

export const refreshSettings = defineSettings(
  'refresh',
  () => ({
    /** How long a refresh or recompute route waits for the worker before answering 202: at most 25 s, inside API Gateway's 29 s. */
    REFRESH_WAIT_SECONDS: seconds('REFRESH_WAIT_SECONDS', 20, 0, 25),
  }),
  { derive: (v) => ({ waitMs: v.REFRESH_WAIT_SECONDS * 1000 }) },
);
