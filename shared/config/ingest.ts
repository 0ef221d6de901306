// Ingest: how an Alertmanager alert names its cluster. (The ingest routes'
// bearer token is the INGEST_TOKEN secret, shared/config/secrets.ts: its value
// locally, checked here for length so a short one stops `npm start`.)
import * as z from '../zod.js';
import { defineSettings } from './env.js';
import { staticTokenVariable } from './secrets.js';

export const ingestSettings = defineSettings(
  'ingest',
  () => ({
    /** The Alertmanager label that names an alert's cluster. */
    ALERT_CLUSTER_LABEL: z._default(
      z.string().check(z.regex(/^[a-zA-Z_][a-zA-Z0-9_]{0,127}$/, { error: 'ALERT_CLUSTER_LABEL must be a Prometheus label name' })),
      'cluster_id',
    ),
    INGEST_TOKEN: staticTokenVariable('INGEST_TOKEN'),
  }),
  // The token itself stays out of the settings: the middleware reads it through secret() as on AWS.
  { secrets: ['INGEST_TOKEN'], derive: (v) => ({ ALERT_CLUSTER_LABEL: v.ALERT_CLUSTER_LABEL }) },
);
