// Prometheus: the credential the metrics puller presents to the query API named
// in the metric-sources rule set (rules/metric-sources.yaml). The rule set says
// how it is used (auth: bearer → the token; basic → the password); it never
// holds the value itself, since every role can read a rule set. SigV4 needs no
// secret: requests are signed with the function's own AWS credentials.
import { defineSettings } from './env.js';
import { credential, secretVariables } from './secrets.js';

export const prometheusSettings = defineSettings('prometheus', () => ({ ...secretVariables('PROMETHEUS_CREDENTIAL') }), {
  secrets: ['PROMETHEUS_CREDENTIAL'],
  derive: (vars) => ({ credential: credential('PROMETHEUS_CREDENTIAL', vars) }),
});
