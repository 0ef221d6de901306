// The metric-sources routes the console calls, and where their rule set is edited.
import { endpoint } from '../../api/client';

export const statusEndpoint = endpoint<'metric-sources', 'status'>('GET', '/api/metric-sources/status');
export const pullEndpoint = endpoint<'metric-sources', 'pull'>('POST', '/api/metric-sources/pull');

/** The rules editor's tab for the metric-sources rule set (rule sets are addressed as /rules?set=<key>). */
export const RULES_EDITOR_URL = '/rules?set=metric-sources';
