// The console's API types, derived from the route table (shared/routes/) with
// type-only imports: nothing of the server is bundled by them, and a change to a route's
// path, query, body or answer fails the console's typecheck.
import type * as z from '../../../../shared/zod.js';
import type { aiIssuesGroup } from '../../../../shared/routes/ai-issues.js';
import type { analysisGroup } from '../../../../shared/routes/analysis.js';
import type { authGroup } from '../../../../shared/routes/auth.js';
import type { chatGroup } from '../../../../shared/routes/chat.js';
import type { clustersGroup } from '../../../../shared/routes/clusters.js';
import type { criticalClustersGroup } from '../../../../shared/routes/critical-clusters.js';
import type { dashboardEmbedGroup } from '../../../../shared/routes/dashboard-embed.js';
import type { fleetGroup } from '../../../../shared/routes/fleet.js';
import type { healthGroup } from '../../../../shared/routes/health.js';
import type { investigationsGroup } from '../../../../shared/routes/investigations.js';
import type { issuesGroup } from '../../../../shared/routes/issues.js';
import type { llmUsageGroup } from '../../../../shared/routes/llm-usage.js';
import type { metricSourcesGroup } from '../../../../shared/routes/metric-sources.js';
import type { patrolGroup } from '../../../../shared/routes/patrol.js';
import type { riskGroup } from '../../../../shared/routes/risk.js';
import type { settingsGroup } from '../../../../shared/routes/settings.js';

export interface Groups {
  auth: typeof authGroup;
  fleet: typeof fleetGroup;
  clusters: typeof clustersGroup;
  health: typeof healthGroup;
  issues: typeof issuesGroup;
  'ai-issues': typeof aiIssuesGroup;
  risk: typeof riskGroup;
  analysis: typeof analysisGroup;
  investigations: typeof investigationsGroup;
  patrol: typeof patrolGroup;
  'critical-clusters': typeof criticalClustersGroup;
  'llm-usage': typeof llmUsageGroup;
  'dashboard-embed': typeof dashboardEmbedGroup;
  chat: typeof chatGroup;
  settings: typeof settingsGroup;
  'metric-sources': typeof metricSourcesGroup;
}
export type GroupName = keyof Groups;
export type RouteName<G extends GroupName> = keyof Groups[G]['routes'] & string;
type Route<G extends GroupName, R extends RouteName<G>> = Groups[G]['routes'][R];

type SchemaOf<D, K extends string> = D extends { [k in K]: infer S extends z.ZodMiniType } ? S : undefined;
type Output<S> = S extends z.ZodMiniType ? z.output<S> : undefined;
type Input<S> = S extends z.ZodMiniType ? z.input<S> : undefined;

/** What the route answers with 200. */
export type Answer<G extends GroupName, R extends RouteName<G>> = Output<SchemaOf<Route<G, R>, 'response'>>;
/** What it answers with 202 (work going on in the background). */
export type Accepted<G extends GroupName, R extends RouteName<G>> = Output<SchemaOf<Route<G, R>, 'accepted'>>;
/** Its query string, path parameters and body, as sent (before the server's defaults and coercion). */
export type QueryOf<G extends GroupName, R extends RouteName<G>> = Input<SchemaOf<Route<G, R>, 'query'>>;
export type ParamsOf<G extends GroupName, R extends RouteName<G>> = Input<SchemaOf<Route<G, R>, 'params'>>;
export type BodyOf<G extends GroupName, R extends RouteName<G>> = Input<SchemaOf<Route<G, R>, 'body'>>;
/** The headers it reads (lower-case names), as declared: the console sends no other. */
export type HeadersOf<G extends GroupName, R extends RouteName<G>> = Input<SchemaOf<Route<G, R>, 'headers'>>;
/** The declared path template, a string literal: `/api/issues/{issue_id}`. */
export type PathOf<G extends GroupName, R extends RouteName<G>> = Route<G, R> extends { path: infer P extends string } ? P : never;
export type MethodOf<G extends GroupName, R extends RouteName<G>> = Route<G, R> extends { method: infer M extends string } ? M : never;

export type Role = Answer<'auth', 'me'>['role'];
/** The roles the route lets in, as a union. */
export type RolesOf<G extends GroupName, R extends RouteName<G>> = Route<G, R> extends { roles: readonly (infer X)[] } ? X : never;
