// The metric-sources rule set's source as a version is written (MetricSourcesToWrite), through the
// same editing code PUT /api/settings/metric-sources runs: a URL the client would append paths to
// wrongly, or that leads to the cloud's metadata service, and a basic username that would split the
// credential are refused with a 422 saying why, and nothing is stored. A version stored before is
// refused by the client instead (test/metric-pull/client-errors.test.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { ValidationFailed } from '../../shared/http/errors.js';
import { submitRuleSet } from '../../shared/rules/editing.js';
import { metricSourcesStatus } from '../../shared/metric-pull/status.js';
import { loadMetricSources } from '../../shared/rules/load.js';
import { useTestTables } from '../support/dynamo.js';
import { metricSourcesYaml, useMetricSources, type SourcesOptions } from '../support/metric-sources.js';

const METRICS: SourcesOptions['metrics'] = [{ key: 'qps', query: 'sum by (cluster_id) (fh_qps)' }];
const ADMIN: Principal = { userId: 'u-admin', username: 'metrics-admin', name: 'Admin', email: 'admin@example.com', role: 'admin' };

beforeAll(async () => {
  await useTestTables();
});

/** The refusal a version with this source meets, written directly (superadmin) and proposed (admin) alike. */
async function refusal(url: string, auth?: string): Promise<string> {
  const before = (await loadMetricSources()).version;
  const direct = await useMetricSources({ url, auth, metrics: METRICS }).then(
    () => undefined,
    (e: unknown) => e,
  );
  const proposed = await submitRuleSet(ADMIN, 'metric-sources', metricSourcesYaml({ url, auth, metrics: METRICS }), {
    ip: '127.0.0.1',
    userAgent: 'test',
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  for (const error of [direct, proposed]) {
    expect(error, `${url} ${auth ?? ''}`).toBeInstanceOf(ValidationFailed);
    expect((error as ValidationFailed).status).toBe(422);
    expect((error as ValidationFailed).message).toBe((direct as ValidationFailed).message);
  }
  expect((await loadMetricSources()).version).toBe(before);
  return (direct as ValidationFailed).message;
}

describe('the metric source as a version is written', () => {
  it('refuses a query string or fragment in the URL (the puller would append /api/v1/… to it; a token there is readable by every role)', async () => {
    for (const url of ['https://prom.example/?api_key=X', 'https://prom.example/api/prom?x=1', 'https://prom.example/#x', 'https://prom.example/?']) {
      expect(await refusal(url, '{ type: bearer }')).toMatch(/^The metric-sources content is not valid: prometheus\.url: no query or fragment in the URL/);
    }
  });

  it('refuses a link-local host, however the address is written (the cloud metadata service)', async () => {
    for (const url of [
      'http://169.254.169.254/',
      'http://169.254.0.1:9090',
      'http://0xA9FEA9FE/',
      'http://2852039166/',
      'http://[fe80::1]:9090',
      'http://[febf::abcd]/',
      'http://[::ffff:169.254.169.254]/',
      'http://[fd00:ec2::254]/',
    ]) {
      expect(await refusal(url)).toMatch(
        /^The metric-sources content is not valid: prometheus\.url: not a link-local address \(169\.254\.0\.0\/16, fe80::\/10\)/,
      );
    }
  });

  it("refuses a basic username holding ':' or a control character (RFC 7617: the first ':' ends it)", async () => {
    for (const username of ['"grafana:ro"', '":"', '"tab\\there"']) {
      expect(await refusal('https://prom.example', `{ type: basic, username: ${username} }`)).toMatch(
        /^The metric-sources content is not valid: prometheus\.auth\.username: a basic username holds no ':'/,
      );
    }
  });

  it('still applies a private address, a plain path, and a basic username without a colon', async () => {
    for (const [url, auth] of [
      ['http://10.0.3.7:9090', undefined],
      ['http://192.168.1.20:9090/prometheus', undefined],
      ['https://172.16.0.9', '{ type: bearer }'],
      ['https://[fd12:3456::1]:9090', '{ type: basic, username: "grafana.reader@example.com" }'],
      ['http://[fec0::1]:9090', undefined],
    ] as const) {
      const before = (await loadMetricSources()).version;
      await useMetricSources({ url, auth, metrics: METRICS });
      expect((await loadMetricSources()).rules.prometheus.url).toBe(url);
      expect((await loadMetricSources()).version).toBe(before + 1);
    }
  });

  it('applies a version without the optional inventory section: no inventory, as with enabled: false', async () => {
    const SUPERADMIN: Principal = { ...ADMIN, userId: 'u-super', username: 'metrics-super', role: 'superadmin' };
    const text = metricSourcesYaml({ url: 'http://10.0.3.7:9090', metrics: METRICS }).split('\ninventory:')[0]!;
    expect(text).not.toContain('inventory');
    const result = await submitRuleSet(SUPERADMIN, 'metric-sources', text, { ip: '127.0.0.1', userAgent: 'test' });
    expect(result.applied).toBe(true);
    expect((await loadMetricSources()).rules.inventory).toBeUndefined();
    expect((await metricSourcesStatus()).inventory).toMatchObject({ enabled: false, upserted_last: 0 });
  });
});
