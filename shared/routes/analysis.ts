import { ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { FLEET_VIEW_MEMORY_MB } from '../function-memory.js';
import { BreakingResponse, UpgradesResponse, UsageResponse } from './dashboard-schemas.js';

export const analysisGroup = defineGroup({
  name: 'analysis',
  tables: { users: 'read', clusters: 'read', metrics: 'read', alerts: 'read', rules: 'read', scores: 'read' },
  // It computes the fleet view in its own container (shared/function-memory.ts says what that measured).
  memoryMb: FLEET_VIEW_MEMORY_MB,
  routes: {
    breaking: {
      method: 'GET',
      path: '/api/analysis/breaking',
      summary: 'Clusters breaching thresholds',
      auth: 'user',
      roles: ANY_ROLE,
      response: BreakingResponse,
      // 10,000 clusters: ≈ 1.5 MB; over what Lambda may answer uncompressed near 40,000 (shared/http/group-handler.ts).
      problems: [406],
    },
    usage: { method: 'GET', path: '/api/analysis/usage', summary: 'Usage charts', auth: 'user', roles: ANY_ROLE, response: UsageResponse },
    upgrades: {
      method: 'GET',
      path: '/api/analysis/upgrades',
      summary: 'Active clusters and engine versions',
      auth: 'user',
      roles: ANY_ROLE,
      response: UpgradesResponse,
      // 10,000 clusters: ≈ 2.5 MB; over what Lambda may answer uncompressed near 25,000 (shared/http/group-handler.ts).
      problems: [406],
    },
  },
});
