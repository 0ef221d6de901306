import * as z from 'zod';
import { ADMIN_UP, ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { FleetCriticalResponse, FleetKpisResponse, FleetRulesResponse, FleetScoresResponse, RefreshResponse } from './dashboard-schemas.js';

/**
 * Refresh and recompute routes (issue 21 §2): the recompute worker does the work; a route answers its
 * contract's 200 when the run finishes within REFRESH_WAIT_SECONDS, else this 202, and
 * GET <route>/{refresh_id} follows the run (202 while running, the same 200 when done, 503 when it failed).
 */
export const RefreshRunning = z.object({ status: z.literal('running'), refresh_id: z.string(), message: z.string() });
export const RefreshIdParams = z.object({ refresh_id: z.string().min(1).max(128) });

export const fleetGroup = defineGroup({
  name: 'fleet',
  config: ['refresh'],
  tables: { users: 'read', clusters: 'read', metrics: 'read', alerts: 'read', rules: 'read', scores: 'readwrite' },
  grants: ['invoke:recompute'],
  routes: {
    scores: {
      method: 'GET',
      path: '/api/fleet/scores',
      summary: 'Unified cluster scores, worst first',
      auth: 'user',
      roles: ANY_ROLE,
      response: FleetScoresResponse,
    },
    kpis: { method: 'GET', path: '/api/fleet/kpis', summary: 'Fleet KPIs', auth: 'user', roles: ANY_ROLE, response: FleetKpisResponse },
    critical: {
      method: 'GET',
      path: '/api/fleet/critical',
      summary: 'Warning and Critical clusters, worst first',
      auth: 'user',
      roles: ANY_ROLE,
      response: FleetCriticalResponse,
    },
    rules: { method: 'GET', path: '/api/fleet/rules', summary: 'Unified scoring rules in force', auth: 'user', roles: ANY_ROLE, response: FleetRulesResponse },
    refresh: {
      method: 'POST',
      path: '/api/fleet/refresh',
      summary: 'Recompute, persist and clear the cache (202 with refresh_id when it outlasts the wait)',
      auth: 'user',
      roles: ADMIN_UP,
      response: RefreshResponse,
      accepted: RefreshRunning,
      problems: [503],
    },
    refreshStatus: {
      method: 'GET',
      path: '/api/fleet/refresh/{refresh_id}',
      summary: 'One refresh: 202 while running, the refresh answer when done',
      auth: 'user',
      roles: ADMIN_UP,
      params: RefreshIdParams,
      response: RefreshResponse,
      accepted: RefreshRunning,
      problems: [503],
    },
  },
});
