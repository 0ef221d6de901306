import { ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { BreakingResponse, UpgradesResponse, UsageResponse } from './dashboard-schemas.js';

export const analysisGroup = defineGroup({
  name: 'analysis',
  tables: { users: 'read', clusters: 'read', metrics: 'read', alerts: 'read', rules: 'read', scores: 'read' },
  routes: {
    breaking: {
      method: 'GET',
      path: '/api/analysis/breaking',
      summary: 'Clusters breaching thresholds',
      auth: 'user',
      roles: ANY_ROLE,
      response: BreakingResponse,
    },
    usage: { method: 'GET', path: '/api/analysis/usage', summary: 'Usage charts', auth: 'user', roles: ANY_ROLE, response: UsageResponse },
    upgrades: {
      method: 'GET',
      path: '/api/analysis/upgrades',
      summary: 'Active clusters and engine versions',
      auth: 'user',
      roles: ANY_ROLE,
      response: UpgradesResponse,
    },
  },
});
