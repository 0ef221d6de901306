// Every configuration concern, by name. Route groups (shared/routes/) and
// workers (shared/workers.ts) declare the concerns they read, as they declare
// their tables; the CDK stack sets each declared concern's variables and grants
// its secrets (infra/config-bindings.ts), and the local runtime validates every
// declared concern at start-up. `core` is read by every function and `tokens`
// by every route group (each verifies JWTs): both are implied.
import { agentBudgetSettings } from './agent-budget.js';
import { agentSettings } from './agents.js';
import { coreSettings } from './core.js';
import { edgeSettings } from './edge.js';
import { embedSettings } from './embed.js';
import { ingestSettings } from './ingest.js';
import { ldapSettings } from './ldap.js';
import { linkSettings } from './links.js';
import { llmPricingSettings } from './llm-pricing.js';
import { llmSettings } from './llm.js';
import { mailSettings } from './mail.js';
import { patrolSettings } from './patrol.js';
import { prometheusSettings } from './prometheus.js';
import { refreshSettings } from './refresh.js';
import { scrapeSettings } from './scrape.js';
import { ticketSettings } from './tickets.js';
import { tokenSettings } from './tokens.js';
import { workerFunctionSettings } from './worker-functions.js';

export const CONCERNS = {
  core: coreSettings,
  tokens: tokenSettings,
  edge: edgeSettings,
  ldap: ldapSettings,
  links: linkSettings,
  mail: mailSettings,
  tickets: ticketSettings,
  llm: llmSettings,
  'llm-pricing': llmPricingSettings,
  embed: embedSettings,
  agents: agentSettings,
  'agent-budget': agentBudgetSettings,
  patrol: patrolSettings,
  refresh: refreshSettings,
  ingest: ingestSettings,
  scrape: scrapeSettings,
  prometheus: prometheusSettings,
  'worker-functions': workerFunctionSettings,
} as const;

export type ConfigConcern = keyof typeof CONCERNS;

/** The concerns a route group or worker reads: its declaration's, plus the implied ones. */
export function concernsOf(kind: 'route-group' | 'worker', declared: readonly ConfigConcern[] = [], grants: readonly string[] = []): ConfigConcern[] {
  const implied: ConfigConcern[] = kind === 'route-group' ? ['core', 'tokens'] : ['core'];
  // Starting a worker reads the variable naming its function.
  if (grants.some((g) => g.startsWith('invoke:'))) implied.push('worker-functions');
  return [...new Set([...implied, ...declared])];
}
