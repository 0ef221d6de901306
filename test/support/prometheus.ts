// A real Prometheus for tests (Debian's `prometheus` 2.42, installed by .ci/run):
// optionally backfilled with history through `promtool tsdb create-blocks-from
// openmetrics`, optionally scraping targets, on a free loopback port, in its own
// temporary folder that stop() removes.
//
// What 2.42 does with backfilled blocks (checked by test/metric-pull/harness.test.ts):
// promtool cuts the history into blocks aligned to 2-hour boundaries (UTC, from the
// epoch); the last block ends at the newest sample, so history up to a few minutes
// ago is queryable as soon as /-/ready answers, with no extra flag (overlapping
// blocks are allowed by default since 2.39). About a minute after start Prometheus
// compacts them (2h → 6h → 18h …); the data stays. Retention counts back from the
// newest block, so a long retention keeps old history. promtool drops, silently, a
// sample older than or equal to the previous one of its series: openMetrics() sorts
// and refuses duplicate timestamps. History must end before now: a scrape of a
// series whose backfill reaches past now would be refused as out of bounds.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { freePort } from '../../infra/local/dynamodb-local.js';

const run = promisify(execFile);

export interface HistorySeries {
  name: string;
  help?: string;
  labels: Record<string, string>;
  samples: [timestampMs: number, value: number][];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

/** Milliseconds → OpenMetrics seconds, fractional when needed, never in exponent form. */
function formatTimestamp(ms: number): string {
  if (!Number.isFinite(ms)) throw new Error(`openMetrics: timestamp ${ms} is not finite`);
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  const seconds = Math.floor(abs / 1000);
  const rest = abs - seconds * 1000;
  if (rest === 0) return `${sign}${seconds}`;
  // Sub-millisecond parts are kept as given (Prometheus rounds to milliseconds).
  const fraction = (rest / 1000).toFixed(6).replace(/^0/, '').replace(/0+$/, '');
  return `${sign}${seconds}${fraction}`;
}

/**
 * OpenMetrics text for `promtool tsdb create-blocks-from openmetrics`: one gauge family per
 * metric name (series of one name grouped, as OpenMetrics requires a family to be contiguous),
 * samples sorted by time, timestamps in seconds, label values escaped, ending with `# EOF`.
 * Two series with the same name and labels are merged. A repeated timestamp in a series is an
 * error (promtool would keep one of them without saying so).
 */
export function openMetrics(series: HistorySeries[]): string {
  const families = new Map<string, { help?: string; series: Map<string, { labels: string; samples: [number, number][] }> }>();
  for (const s of series) {
    if (!METRIC_NAME.test(s.name)) throw new Error(`openMetrics: invalid metric name ${JSON.stringify(s.name)}`);
    let family = families.get(s.name);
    if (!family) {
      family = { series: new Map() };
      families.set(s.name, family);
    }
    if (s.help !== undefined) {
      if (family.help !== undefined && family.help !== s.help) throw new Error(`openMetrics: two different help texts for ${s.name}`);
      family.help = s.help;
    }
    const names = Object.keys(s.labels).sort();
    for (const name of names) {
      if (!LABEL_NAME.test(name) || name.startsWith('__')) throw new Error(`openMetrics: invalid label name ${JSON.stringify(name)} on ${s.name}`);
    }
    const labels = names.length ? `{${names.map((n) => `${n}="${escapeLabelValue(s.labels[n]!)}"`).join(',')}}` : '';
    const entry = family.series.get(labels) ?? { labels, samples: [] };
    family.series.set(labels, entry);
    entry.samples.push(...s.samples);
  }
  const lines: string[] = [];
  for (const [name, family] of families) {
    if (family.help !== undefined) lines.push(`# HELP ${name} ${family.help.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}`);
    lines.push(`# TYPE ${name} gauge`);
    for (const { labels, samples } of family.series.values()) {
      const sorted = [...samples].sort((a, b) => a[0] - b[0]);
      sorted.forEach(([t, v], i) => {
        if (i > 0 && sorted[i - 1]![0] === t) throw new Error(`openMetrics: two samples of ${name}${labels} at ${t} ms`);
        lines.push(`${name}${labels} ${formatNumber(v)} ${formatTimestamp(t)}`);
      });
    }
  }
  lines.push('# EOF');
  return `${lines.join('\n')}\n`;
}

export interface StartPrometheusOptions {
  /** OpenMetrics text (see openMetrics()) backfilled with promtool before Prometheus starts. */
  history?: string;
  /** prometheus.yml's `scrape_configs`. */
  scrapeConfigs?: object[];
  /** prometheus.yml's `global.scrape_interval` (default 15s, Prometheus' own). */
  scrapeInterval?: string;
  /** How long to wait for /-/ready (default 30 s). */
  startTimeoutMs?: number;
  /** prometheus.yml's `remote_read`: storages it reads besides its own. */
  remoteRead?: object[];
  /** prometheus.yml's `rule_files` (absolute paths), evaluated every `scrapeInterval`. */
  ruleFiles?: string[];
}

/** One alerting rule as GET /api/v1/rules answers it: its health, and its alerts (pending or firing). */
export interface AlertingRule {
  name: string;
  health: 'ok' | 'err' | 'unknown';
  lastError?: string;
  alerts: { labels: Record<string, string>; annotations: Record<string, string>; state: 'pending' | 'firing' }[];
}

/** One series of an instant vector, as /api/v1/query answers it: [seconds, "value"]. */
export interface InstantSample {
  metric: Record<string, string>;
  value: [seconds: number, value: string];
}

/** One series of a range query, as /api/v1/query_range answers it. */
export interface RangeSeries {
  metric: Record<string, string>;
  values: [seconds: number, value: string][];
}

export interface RunningPrometheus {
  /** e.g. http://127.0.0.1:PORT, the query API's base URL. */
  url: string;
  port: number;
  /** The TSDB folder (--storage.tsdb.path). */
  dataDir: string;
  /** What promtool printed when it created the blocks (its block table), '' without history. */
  backfillOutput: string;
  /** The last few KB Prometheus logged, for assertion messages. */
  output(): string;
  /** GET /api/v1/query; `timeMs` defaults to Prometheus' now. Fails unless the result is a vector. */
  query(promql: string, timeMs?: number): Promise<InstantSample[]>;
  /** GET /api/v1/query_range; fails unless the result is a matrix. */
  queryRange(promql: string, range: { startMs: number; endMs: number; stepSeconds: number }): Promise<RangeSeries[]>;
  /** GET /api/v1/rules?type=alert: every alerting rule of the rule files, with its alerts. */
  alertingRules(): Promise<AlertingRule[]>;
  stop(): Promise<void>;
}

function binary(variable: 'PROMETHEUS_BIN' | 'PROMTOOL_BIN', fallback: string): string {
  const path = process.env[variable] || fallback;
  if (!existsSync(path)) {
    throw new Error(`${path} not found (set ${variable} to use another): apt-get install prometheus; .ci/run installs it (promtool ships in the same package)`);
  }
  return path;
}

export function prometheusBinary(): string {
  return binary('PROMETHEUS_BIN', '/usr/bin/prometheus');
}

export function promtoolBinary(): string {
  return binary('PROMTOOL_BIN', '/usr/bin/promtool');
}

/** Writes `history` to a file and runs promtool into `dataDir`; returns promtool's stdout. */
export async function backfill(history: string, workDir: string, dataDir: string): Promise<string> {
  const promtool = promtoolBinary();
  const file = join(workDir, 'history.om');
  await writeFile(file, history);
  try {
    const { stdout } = await run(promtool, ['tsdb', 'create-blocks-from', 'openmetrics', file, dataDir], { maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const e = error as { code?: number; stderr?: string; stdout?: string; message: string };
    throw new Error(`promtool tsdb create-blocks-from openmetrics failed (exit ${e.code ?? '?'}): ${(e.stderr || e.stdout || e.message).trim()}`);
  }
}

export async function startPrometheus(options: StartPrometheusOptions = {}): Promise<RunningPrometheus> {
  const prometheus = prometheusBinary();
  const workDir = await mkdtemp(join(tmpdir(), 'fleet-prometheus-'));
  const dataDir = join(workDir, 'data');
  try {
    const backfillOutput = options.history === undefined ? '' : await backfill(options.history, workDir, dataDir);
    const config: Record<string, unknown> = {};
    if (options.scrapeInterval) config.global = { scrape_interval: options.scrapeInterval, evaluation_interval: options.scrapeInterval };
    if (options.ruleFiles?.length) config.rule_files = options.ruleFiles;
    if (options.scrapeConfigs?.length) config.scrape_configs = options.scrapeConfigs;
    if (options.remoteRead?.length) config.remote_read = options.remoteRead;
    const configFile = join(workDir, 'prometheus.yml');
    await writeFile(configFile, stringify(config));
    // freePort() closes the port before Prometheus binds it: another process may take it in
    // between, so a start that fails on the address is tried again on another port.
    for (let attempt = 1; ; attempt++) {
      try {
        return await launch(prometheus, configFile, workDir, dataDir, backfillOutput, options.startTimeoutMs ?? 30_000);
      } catch (error) {
        if (attempt >= 3 || !/address already in use/.test((error as Error).message)) throw error;
      }
    }
  } catch (error) {
    await rm(workDir, { recursive: true, force: true });
    throw error;
  }
}

async function launch(
  prometheus: string,
  configFile: string,
  workDir: string,
  dataDir: string,
  backfillOutput: string,
  timeoutMs: number,
): Promise<RunningPrometheus> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    prometheus,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${dataDir}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // Retention counts back from the newest block; keep everything the tests backfill.
      '--storage.tsdb.retention.time=3650d',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: workDir },
  );
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  // 'close', not 'exit': by then all of its output has been read.
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null && !spawnError) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    }
    await rm(workDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (spawnError || child.exitCode !== null || child.signalCode !== null) {
      const why = spawnError ? spawnError.message : `exited with ${child.exitCode ?? child.signalCode}`;
      if (!spawnError) await exited;
      throw new Error(`Prometheus did not start (${why}):\n${output.slice(-3000)}`);
    }
    try {
      const res = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stopProcessOnly(child, exited);
      throw new Error(`Prometheus was not ready within ${timeoutMs} ms:\n${output.slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  async function api<T>(path: string, params: Record<string, string>, resultType: string): Promise<T> {
    const res = await fetch(`${url}${path}?${new URLSearchParams(params)}`);
    const text = await res.text();
    let body: { status?: string; error?: string; data?: { resultType: string; result: unknown } };
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`${path} ${params.query}: ${res.status} ${text.slice(0, 500)}`);
    }
    if (body.status !== 'success' || !body.data) throw new Error(`${path} ${params.query}: ${res.status} ${body.error ?? text.slice(0, 500)}`);
    if (body.data.resultType !== resultType) throw new Error(`${path} ${params.query}: a ${body.data.resultType}, not a ${resultType}`);
    return body.data.result as T;
  }

  return {
    url,
    port,
    dataDir,
    backfillOutput,
    output: () => output,
    query: (promql, timeMs) =>
      api<InstantSample[]>('/api/v1/query', { query: promql, ...(timeMs === undefined ? {} : { time: String(timeMs / 1000) }) }, 'vector'),
    queryRange: (promql, { startMs, endMs, stepSeconds }) =>
      api<RangeSeries[]>(
        '/api/v1/query_range',
        { query: promql, start: String(startMs / 1000), end: String(endMs / 1000), step: String(stepSeconds) },
        'matrix',
      ),
    alertingRules: async () => {
      const res = await fetch(`${url}/api/v1/rules?type=alert`);
      const body = (await res.json()) as { status: string; data?: { groups: { rules: AlertingRule[] }[] } };
      if (body.status !== 'success' || !body.data) throw new Error(`/api/v1/rules: ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
      return body.data.groups.flatMap((g) => g.rules);
    },
    stop,
  };
}

async function stopProcessOnly(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await exited;
}
