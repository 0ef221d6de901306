// A metric-sources rule set (rules/metric-sources.yaml) as YAML text, for the
// puller's tests and bench: a source, one query per metric key, and the
// inventory (off unless asked for), with the shipped defaults' shape.
import type { Principal } from '../../shared/auth/principal.js';
import { submitRuleSet } from '../../shared/rules/editing.js';

export interface SourcesOptions {
  url: string;
  /** The YAML of `auth`, e.g. `{ type: sigv4, region: us-east-1 }`; none by default. */
  auth?: string;
  timeoutSeconds?: number;
  stepSeconds?: number;
  backfillDays?: number;
  maxPointsPerRequest?: number;
  metrics: { key: string; query: string; convert?: string }[];
  /** The inventory's info-series query and label map; the inventory is off without it. */
  inventory?: { query: string; labels: Record<string, string> };
}

export function metricSourcesYaml(o: SourcesOptions): string {
  const metrics = o.metrics
    .map((m) => `  - metric_key: ${m.key}\n    query: ${JSON.stringify(m.query)}\n${m.convert ? `    convert: ${m.convert}\n` : ''}`)
    .join('');
  const labels = Object.entries(o.inventory?.labels ?? {})
    .map(([field, label]) => `    ${field}: ${label}\n`)
    .join('');
  return `prometheus:
  enabled: true
  url: ${o.url}
  auth: ${o.auth ?? '{ type: none }'}
  timeout_seconds: ${o.timeoutSeconds ?? 10}
  step_seconds: ${o.stepSeconds ?? 60}
  settle_seconds: 0
  backfill_days: ${o.backfillDays ?? 1}
  max_points_per_request: ${o.maxPointsPerRequest ?? 200_000}
cluster:
  label: cluster_id
  match: id
metrics:
${metrics}inventory:
  enabled: ${o.inventory ? 'true' : 'false'}
  query: ${JSON.stringify(o.inventory?.query ?? 'up')}
  labels:${labels ? `\n${labels}` : ' {}\n'}  defaults:
    customer_name: Unassigned
    account_id: unassigned
    account_name: Unassigned
    email: ops@example.com
    customer_tier: B
    cluster_type: shared_nothing
    region: unknown
    engine_version: "3.3.0"
    resource_state: Running
`;
}

const SUPERADMIN: Principal = { userId: 'u-root', username: 'root', name: 'Root', email: 'root@example.com', role: 'superadmin' };

/** Applies a metric-sources version as a superadmin would (PUT /api/settings/metric-sources), through the same editing code. */
export async function useMetricSources(options: SourcesOptions): Promise<void> {
  const result = await submitRuleSet(SUPERADMIN, 'metric-sources', metricSourcesYaml(options), { ip: '127.0.0.1', userAgent: 'test' });
  if (!result.applied) throw new Error(`metric-sources was not applied: ${JSON.stringify(result)}`);
}
