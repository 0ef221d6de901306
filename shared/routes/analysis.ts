import { ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';

export const analysisGroup = defineGroup({
  name: 'analysis',
  tables: { users: 'read', clusters: 'read', metrics: 'read', rules: 'read', scores: 'read' },
  routes: {
    breaking: { method: 'GET', path: '/api/analysis/breaking', summary: 'Clusters breaching thresholds', auth: 'user', roles: ANY_ROLE },
    usage: { method: 'GET', path: '/api/analysis/usage', summary: 'Usage charts', auth: 'user', roles: ANY_ROLE },
    upgrades: { method: 'GET', path: '/api/analysis/upgrades', summary: 'Active clusters and engine versions', auth: 'user', roles: ANY_ROLE },
  },
});
