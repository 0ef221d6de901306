// The AI patrol: how long the trigger waits, and the patrol lock's lease.
import { defineSettings, seconds } from './env.js';

export const patrolSettings = defineSettings(
  'patrol',
  () => ({
    /** How long POST /api/patrol/trigger waits for the scan before answering 202: at most 20 s, well inside the route's 29 s. */
    PATROL_WAIT_SECONDS: seconds('PATROL_WAIT_SECONDS', 20, 0, 20),
    /** The patrol lock's lease; the running scan renews it every third of it. */
    PATROL_LEASE_SECONDS: seconds('PATROL_LEASE_SECONDS', 120, 1, 3600),
  }),
  { derive: (v) => ({ waitMs: v.PATROL_WAIT_SECONDS * 1000, leaseMs: v.PATROL_LEASE_SECONDS * 1000 }) },
);
