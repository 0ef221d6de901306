import { ADMIN_UP, ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { FLEET_VIEW_MEMORY_MB } from '../function-memory.js';
import { VIEW_VALIDATOR } from './validators.js';
import { OneClusterQuery } from './common.js';
import {
  FleetCriticalResponse,
  FleetKpisResponse,
  FleetRulesResponse,
  FleetScoresResponse,
  RefreshIdParams,
  RefreshResponse,
  RefreshRunning,
} from './dashboard-schemas.js';

export const fleetGroup = defineGroup({
  name: 'fleet',
  config: ['refresh'],
  tables: { users: 'read', clusters: 'read', metrics: 'read', alerts: 'read', rules: 'read', scores: 'readwrite', locks: 'readwrite' },
  leases: ['refresh'],
  grants: ['invoke:recompute'],
  // It computes the fleet view in its own container (shared/function-memory.ts says what that measured).
  memoryMb: FLEET_VIEW_MEMORY_MB,
  routes: {
    scores: {
      method: 'GET',
      path: '/api/fleet/scores',
      revalidate: VIEW_VALIDATOR,
      summary: "Unified cluster scores, worst first (`cluster_id`: that cluster's alone)",
      auth: 'user',
      roles: ANY_ROLE,
      query: OneClusterQuery,
      response: FleetScoresResponse,
      // 10,000 clusters: ≈ 18 MB, over what Lambda may answer unless gzipped (shared/http/group-handler.ts).
      problems: [406],
    },
    kpis: {
      method: 'GET',
      path: '/api/fleet/kpis',
      summary: 'Fleet KPIs',
      auth: 'user',
      roles: ANY_ROLE,
      response: FleetKpisResponse,
      revalidate: VIEW_VALIDATOR,
    },
    critical: {
      method: 'GET',
      path: '/api/fleet/critical',
      revalidate: VIEW_VALIDATOR,
      summary: 'Warning and Critical clusters, worst first',
      auth: 'user',
      roles: ANY_ROLE,
      response: FleetCriticalResponse,
      // Every Warning and Critical cluster as the scores show them: a troubled 10,000 can pass 6 MB too.
      problems: [406],
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
      // 409: a refresh claim lost to a concurrent request (shared/scoring/refresh-claim.ts).
      problems: [409, 503],
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
