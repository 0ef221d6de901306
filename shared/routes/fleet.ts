import { ADMIN_UP, ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { FleetCriticalResponse, FleetKpisResponse, FleetRulesResponse, FleetScoresResponse, RefreshResponse } from './dashboard-schemas.js';

export const fleetGroup = defineGroup({
  name: 'fleet',
  tables: { users: 'read', clusters: 'read', metrics: 'read', alerts: 'read', rules: 'read', scores: 'readwrite' },
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
      summary: 'Recompute, persist and clear the cache',
      auth: 'user',
      roles: ADMIN_UP,
      response: RefreshResponse,
    },
  },
});
