// The list of route groups: read by the local runtime, the CDK stack, the
// OpenAPI document and the tests. Lambda bundles import only their own group.
import { aiIssuesGroup } from './ai-issues.js';
import { analysisGroup } from './analysis.js';
import { authGroup } from './auth.js';
import { chatGroup } from './chat.js';
import { clustersGroup } from './clusters.js';
import { criticalClustersGroup } from './critical-clusters.js';
import { dashboardEmbedGroup } from './dashboard-embed.js';
import { fleetGroup } from './fleet.js';
import { healthGroup } from './health.js';
import { ingestGroup } from './ingest.js';
import { investigationsGroup } from './investigations.js';
import { issuesGroup } from './issues.js';
import { llmUsageGroup } from './llm-usage.js';
import { metricSourcesGroup } from './metric-sources.js';
import { metricsGroup } from './metrics.js';
import { patrolGroup } from './patrol.js';
import { riskGroup } from './risk.js';
import { settingsGroup } from './settings.js';
import type { RouteDeclaration, RouteGroup } from '../http/route.js';

export const ROUTE_GROUPS: readonly RouteGroup[] = [
  authGroup,
  fleetGroup,
  clustersGroup,
  healthGroup,
  issuesGroup,
  aiIssuesGroup,
  riskGroup,
  analysisGroup,
  investigationsGroup,
  patrolGroup,
  criticalClustersGroup,
  llmUsageGroup,
  dashboardEmbedGroup,
  chatGroup,
  settingsGroup,
  ingestGroup,
  metricsGroup,
  metricSourcesGroup,
];

export interface DeclaredRoute {
  group: RouteGroup;
  id: string;
  route: RouteDeclaration;
}

/** Every declared route, flattened. */
export function allRoutes(): DeclaredRoute[] {
  return ROUTE_GROUPS.flatMap((group) => Object.entries(group.routes).map(([id, route]) => ({ group, id, route })));
}
