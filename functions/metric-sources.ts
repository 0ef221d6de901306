// metric-sources route group: the metrics puller's status, and a pull on demand.
import { createGroupHandler } from '../shared/http/group-handler.js';
import { Reply } from '../shared/http/route.js';
import { metricSourcesStatus, startPull } from '../shared/metric-pull/status.js';
import { metricSourcesGroup } from '../shared/routes/metric-sources.js';

export const handler = createGroupHandler(metricSourcesGroup, {
  status: async () => metricSourcesStatus(),
  // The pull runs in the background: 202, and the status route shows its outcome; 200 when a run was going already.
  pull: async () => {
    const answer = await startPull();
    return answer.status === 'started' ? new Reply(202, answer) : answer;
  },
});
