import { ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { FLEET_VIEW_MEMORY_MB } from '../function-memory.js';
import { VIEW_VALIDATOR } from './validators.js';
import { OneClusterQuery } from './common.js';
import { RiskRulesTableResponse, RiskSnapshotsResponse } from './dashboard-schemas.js';

export const riskGroup = defineGroup({
  name: 'risk',
  tables: { users: 'read', clusters: 'read', metrics: 'read', alerts: 'read', rules: 'read', scores: 'read' },
  // It computes the fleet view in its own container (shared/function-memory.ts says what that measured).
  memoryMb: FLEET_VIEW_MEMORY_MB,
  routes: {
    snapshots: {
      method: 'GET',
      path: '/api/risk/snapshots',
      revalidate: VIEW_VALIDATOR,
      summary: "Risk snapshot per cluster (`cluster_id`: that cluster's alone, the summary of it)",
      auth: 'user',
      roles: ANY_ROLE,
      query: OneClusterQuery,
      response: RiskSnapshotsResponse,
      // 10,000 clusters: ≈ 8 MB escaped, over what Lambda may answer unless gzipped (shared/http/group-handler.ts).
      problems: [406],
    },
    rulesTable: {
      method: 'GET',
      path: '/api/risk/rules-table',
      summary: 'Risk rules in force',
      auth: 'user',
      roles: ANY_ROLE,
      response: RiskRulesTableResponse,
    },
  },
});
