import { ADMIN_UP, ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { FLEET_VIEW_MEMORY_MB } from '../function-memory.js';
import { VIEW_VALIDATOR } from './validators.js';
import { OneClusterQuery } from './common.js';
import { EnrichmentResponse, HealthKpisResponse, HealthRefreshResponse, HealthScoresResponse, RefreshIdParams, RefreshRunning } from './dashboard-schemas.js';

export const healthGroup = defineGroup({
  name: 'health',
  config: ['refresh'],
  tables: { users: 'read', clusters: 'read', metrics: 'read', alerts: 'read', rules: 'read', scores: 'readwrite', locks: 'readwrite' },
  leases: ['refresh'],
  grants: ['invoke:recompute'],
  // It computes the fleet view in its own container (shared/function-memory.ts says what that measured).
  memoryMb: FLEET_VIEW_MEMORY_MB,
  routes: {
    scores: {
      method: 'GET',
      path: '/api/health/scores',
      revalidate: VIEW_VALIDATOR,
      summary: "Metrics-only health scores, worst first (`cluster_id`: that cluster's alone)",
      auth: 'user',
      roles: ANY_ROLE,
      query: OneClusterQuery,
      response: HealthScoresResponse,
      // 10,000 clusters: ≈ 21 MB, over what Lambda may answer unless gzipped (shared/http/group-handler.ts).
      problems: [406],
    },
    kpis: {
      method: 'GET',
      path: '/api/health/kpis',
      summary: 'Health KPIs',
      auth: 'user',
      roles: ANY_ROLE,
      response: HealthKpisResponse,
      revalidate: VIEW_VALIDATOR,
    },
    enrichment: {
      method: 'GET',
      path: '/api/health/enrichment',
      revalidate: VIEW_VALIDATOR,
      summary: 'Cluster type and region per cluster',
      auth: 'user',
      roles: ANY_ROLE,
      response: EnrichmentResponse,
      // 10,000 clusters: ≈ 1.6 MB; over what Lambda may answer uncompressed near 40,000 (shared/http/group-handler.ts).
      problems: [406],
    },
    refresh: {
      method: 'POST',
      path: '/api/health/refresh',
      summary: 'Recompute health scores, persist, invalidate cache (202 with refresh_id when it outlasts the wait)',
      auth: 'user',
      roles: ADMIN_UP,
      response: HealthRefreshResponse,
      accepted: RefreshRunning,
      // 409: a refresh claim lost to a concurrent request (shared/scoring/refresh-claim.ts). 406: it answers every
      // cluster's health score, over 6 MB uncompressed from about 2,500 clusters, as GET /api/health/scores does.
      problems: [406, 409, 503],
    },
    refreshStatus: {
      method: 'GET',
      path: '/api/health/refresh/{refresh_id}',
      summary: 'One health refresh: 202 while running, the refresh answer when done',
      auth: 'user',
      roles: ADMIN_UP,
      params: RefreshIdParams,
      response: HealthRefreshResponse,
      accepted: RefreshRunning,
      problems: [406, 503],
    },
  },
});
