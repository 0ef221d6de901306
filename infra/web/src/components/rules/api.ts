// The rule sets and their routes. Every set's routes are declared from one
// template (`/api/settings/${ruleSet}`) and answer the same shapes, so one typed
// triple per set is enough; the health set's route names carry the types.
import { type Endpoint, endpoint } from '../../api/client';
import type { Answer } from '../../api/types';

/** The rule sets as the Rules page names them in its URL (`/rules?set=…`), in tab order. */
export const RULE_SETS = ['health', 'issue', 'risk', 'metric-sources'] as const;
export type RuleSetKey = (typeof RULE_SETS)[number];
/** A rule set's name in the API (`/api/settings/<name>`, a proposal's `rule_set`), from the route table. */
export type RuleSetName = Answer<'settings', 'listChanges'>['changes'][number]['rule_set'];

export const RULE_SET_NAME: Record<RuleSetKey, RuleSetName> = {
  health: 'health-rules',
  issue: 'issue-rules',
  risk: 'risk-rules',
  'metric-sources': 'metric-sources',
};
/** The Rules page's `set` for a rule set's API name (a proposal links to its set's tab). */
export const RULE_SET_KEY = Object.fromEntries(RULE_SETS.map((key) => [RULE_SET_NAME[key], key])) as Record<RuleSetName, RuleSetKey>;

export const RULE_SET_LABEL: Record<RuleSetKey, string> = {
  health: 'Health rules',
  issue: 'Issue rules',
  risk: 'Risk rules',
  'metric-sources': 'Metric sources',
};
export const NAME_LABEL = Object.fromEntries(RULE_SETS.map((key) => [RULE_SET_NAME[key], RULE_SET_LABEL[key]])) as Record<RuleSetName, string>;
export const RULE_SET_HELP: Record<RuleSetKey, string> = {
  health: 'How health scores are computed: metric dimensions and thresholds, alert bands, tier multipliers and the Healthy/Warning/Critical classification.',
  issue: 'How alerts are grouped into issues: grouping keys, join window, quiet period and severity patterns.',
  risk: 'How risk snapshots are computed: dimensions, weights and the warning and critical levels.',
  'metric-sources':
    'Where the metrics puller reads the fleet’s metrics: the Prometheus query API (URL, authentication, step, backfill), one PromQL query per metric key with its unit conversion, and the optional cluster inventory. Credentials never go here: a token or password is the PROMETHEUS_CREDENTIAL secret.',
};
/** What follows an applied version, said after a save. */
export const RULE_SET_APPLIES: Record<RuleSetKey, string> = {
  health: 'Scores use it from now on.',
  // shared/issues/README.md: a rule edit regroups the horizon's alerts in the next scheduled recompute, not at once.
  issue: 'Alerts delivered from now on are grouped by it; issues already formed are regrouped by the next scheduled recompute.',
  risk: 'Risk snapshots use it from now on.',
  'metric-sources': 'The next pull of metrics uses it.',
};

export interface RuleSetEndpoints {
  get: Endpoint<'settings', 'getHealthRules'>;
  put: Endpoint<'settings', 'putHealthRules'>;
  versions: Endpoint<'settings', 'healthRuleVersions'>;
}

// Same shapes for every set: the other triples are typed as the health one's.
const same = <T>(e: unknown) => e as T;

export const RULE_ENDPOINTS: Record<RuleSetKey, RuleSetEndpoints> = {
  health: {
    get: endpoint<'settings', 'getHealthRules'>('GET', '/api/settings/health-rules'),
    put: endpoint<'settings', 'putHealthRules'>('PUT', '/api/settings/health-rules'),
    versions: endpoint<'settings', 'healthRuleVersions'>('GET', '/api/settings/health-rules/versions'),
  },
  issue: {
    get: same(endpoint<'settings', 'getIssueRules'>('GET', '/api/settings/issue-rules')),
    put: same(endpoint<'settings', 'putIssueRules'>('PUT', '/api/settings/issue-rules')),
    versions: same(endpoint<'settings', 'issueRuleVersions'>('GET', '/api/settings/issue-rules/versions')),
  },
  risk: {
    get: same(endpoint<'settings', 'getRiskRules'>('GET', '/api/settings/risk-rules')),
    put: same(endpoint<'settings', 'putRiskRules'>('PUT', '/api/settings/risk-rules')),
    versions: same(endpoint<'settings', 'riskRuleVersions'>('GET', '/api/settings/risk-rules/versions')),
  },
  'metric-sources': {
    get: same(endpoint<'settings', 'getMetricSources'>('GET', '/api/settings/metric-sources')),
    put: same(endpoint<'settings', 'putMetricSources'>('PUT', '/api/settings/metric-sources')),
    versions: same(endpoint<'settings', 'metricSourceVersions'>('GET', '/api/settings/metric-sources/versions')),
  },
};

/** What an edit would change before it is saved or proposed: only the rule sets the scores follow have one. */
export const IMPACT_ENDPOINTS: Partial<Record<RuleSetKey, Endpoint<'settings', 'healthRulesImpact'>>> = {
  health: endpoint<'settings', 'healthRulesImpact'>('POST', '/api/settings/health-rules/impact'),
  risk: same(endpoint<'settings', 'riskRulesImpact'>('POST', '/api/settings/risk-rules/impact')),
};

export const changesEndpoint = endpoint<'settings', 'listChanges'>('GET', '/api/settings/config-changes');
export const changeEndpoint = endpoint<'settings', 'getChange'>('GET', '/api/settings/config-changes/{change_id}');
export const reviewEndpoint = endpoint<'settings', 'reviewChange'>('POST', '/api/settings/config-changes/{change_id}/review');
export const withdrawEndpoint = endpoint<'settings', 'withdrawChange'>('POST', '/api/settings/config-changes/{change_id}/withdraw');

export type LiveRules = Answer<'settings', 'getHealthRules'>;
export type SubmitAnswer = Answer<'settings', 'putHealthRules'>;
export type Versions = Answer<'settings', 'healthRuleVersions'>;
export type ChangeSummary = Answer<'settings', 'listChanges'>['changes'][number];
export type ChangeDetail = Answer<'settings', 'getChange'>;
