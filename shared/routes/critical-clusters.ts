import { ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { CriticalClustersResponse } from './dashboard-schemas.js';

export const criticalClustersGroup = defineGroup({
  name: 'critical-clusters',
  tables: { users: 'read', clusters: 'read', metrics: 'read', alerts: 'read', rules: 'read', scores: 'read' },
  routes: {
    list: {
      method: 'GET',
      path: '/api/critical-clusters',
      summary: 'Up to 15 most severe clusters',
      auth: 'user',
      roles: ANY_ROLE,
      response: CriticalClustersResponse,
    },
  },
});
