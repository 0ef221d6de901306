// ingest route group.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { ingestGroup } from '../shared/routes/ingest.js';

const later = notImplemented('issue #4, fleet data');

export const handler = createGroupHandler(ingestGroup, {
  clusters: later,
  metrics: later,
  alerts: later,
  logs: later,
});
