import { ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { FLEET_VIEW_MEMORY_MB } from '../function-memory.js';
import { VIEW_VALIDATOR } from './validators.js';
import { CriticalClustersResponse } from './dashboard-schemas.js';

export const criticalClustersGroup = defineGroup({
  name: 'critical-clusters',
  tables: { users: 'read', clusters: 'read', metrics: 'read', alerts: 'read', rules: 'read', scores: 'read' },
  // It computes the fleet view in its own container (shared/function-memory.ts says what that measured).
  memoryMb: FLEET_VIEW_MEMORY_MB,
  routes: {
    list: {
      method: 'GET',
      path: '/api/critical-clusters',
      revalidate: VIEW_VALIDATOR,
      summary: 'Up to 15 most severe clusters',
      auth: 'user',
      roles: ANY_ROLE,
      response: CriticalClustersResponse,
    },
  },
});
