// Ingest: how an Alertmanager alert names its cluster. (The ingest routes'
// bearer token is the INGEST_TOKEN secret, shared/config/secrets.ts.)
import * as z from '../zod.js';
import { defineSettings } from './env.js';

export const ingestSettings = defineSettings(
  'ingest',
  {
    /** The Alertmanager label that names an alert's cluster. */
    ALERT_CLUSTER_LABEL: z._default(
      z.string().check(z.regex(/^[a-zA-Z_][a-zA-Z0-9_]{0,127}$/, { error: 'ALERT_CLUSTER_LABEL must be a Prometheus label name' })),
      'cluster_id',
    ),
  },
  { secrets: ['INGEST_TOKEN'] },
);
