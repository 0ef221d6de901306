// recompute: scheduled (every 15 minutes) refresh of scores and risk, so
// dashboards are never older than that without anyone clicking refresh.
// The same run regroups recent alerts into issues (open issues whose quiet
// period has passed become Resolved; edited issue rules reach recent history)
// and into AI issues (only clusters whose alerts changed: the debounce), and
// creates agent tasks for the clusters the health rules' ai_trigger selects.
import { createAgentTasks } from '../shared/agents/tasks.js';
import { regroupAiRecent } from '../shared/ai-issues/regroup.js';
import { regroupRecent } from '../shared/issues/regroup.js';
import { createLogger, workerHandler } from '../shared/log.js';
import { fleetKpis } from '../shared/scoring/fleet-score.js';
import { refreshFleetView } from '../shared/scoring/fleet-view.js';

const log = createLogger('recompute');

// Its log lines (and the grouping and agent modules' lines during the run) carry the run's ids.
export const handler = workerHandler('recompute', async () => {
  const started = Date.now();
  // Grouping failures are logged per cluster inside regroupRecent; anything else must not cost the score refresh.
  const failedSoftly = (what: string) => (error: unknown) => {
    log.error(`${what} failed`, { error: String(error) });
    return null;
  };
  const [view, issues, aiIssues] = await Promise.all([
    refreshFleetView(['fleet', 'health', 'risk']),
    regroupRecent().catch(failedSoftly('issue grouping pass')),
    regroupAiRecent().catch(failedSoftly('AI grouping pass')),
  ]);
  // Clusters the health rules' ai_trigger selects get an agent task (and the agent worker is started).
  const agentTasks = await createAgentTasks(view).catch(failedSoftly('agent task creation'));
  const kpis = fleetKpis(view.scores);
  const result = {
    generated_at: view.generatedAt,
    clusters: kpis.total_clusters,
    critical: kpis.critical_count,
    warning: kpis.warning_count,
    issues,
    ai_issues: aiIssues,
    agent_tasks: agentTasks,
  };
  log.info('recomputed', { ...result, duration_ms: Date.now() - started });
  return result;
});
