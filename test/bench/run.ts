// `npm run bench`: performance figures measured on this machine against a
// DynamoDB Local started for the run (so they include its ≈ms round trips).
// Each suite prints its own rows; the run ends with the whole table.
import { randomUUID } from 'node:crypto';
import { localClient, startDynamoDbLocal } from '../../infra/local/dynamodb-local.js';
import { ensureTables } from '../../infra/local/tables.js';
import { resetSettings } from '../../shared/config/env.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.LOG_LEVEL = 'silent';

export interface Row {
  suite: string;
  measure: string;
  value: string;
}

const rows: Row[] = [];
export type Report = (suite: string, measure: string, value: string) => void;

export const report: Report = (suite, measure, value) => {
  rows.push({ suite, measure, value });
  console.log(`  ${suite} · ${measure}: ${value}`);
};

export interface BenchContext {
  report: typeof report;
  /** Points the data layer at a new, empty set of tables. */
  freshTables(): Promise<void>;
}

// `npm run bench -- issues scoring` runs only the suites named (engine, rules, cold-start, chat-sql, fleet-data, metric-pull, alerts, scoring, issues, scrape, llm, tickets, console, refresh-memory, chat-memory, puller-memory).
const only = process.argv.slice(2);
const wanted = (name: string) => only.length === 0 || only.includes(name);

// First, with nothing else running: the pure engine.
if (wanted('engine')) {
  const engine = await import('./engine.js');
  console.log(`\n${engine.title}`);
  await engine.run(report);
}
if (wanted('rules')) {
  const suite = await import('./rules.js');
  console.log(`\n${suite.title}`);
  await suite.run(report);
}
if (wanted('cold-start')) {
  const suite = await import('./cold-start.js');
  console.log(`\n${suite.title}`);
  await suite.run(report);
}
if (wanted('chat-sql')) {
  const suite = await import('./chat-sql.js');
  console.log(`\n${suite.title}`);
  await suite.run(report);
}

const dynamo = await startDynamoDbLocal({ startTimeoutMs: 60_000 });
try {
  Object.assign(process.env, { AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_REGION: 'local', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });
  const freshTables = async () => {
    process.env.TABLE_PREFIX = `bench-${randomUUID().slice(0, 8)}-`;
    const client = localClient(dynamo.endpoint);
    await ensureTables(client, process.env.TABLE_PREFIX);
    resetSettings(); // settings are read once per process: the new prefix is a new container's
    client.destroy();
  };

  const suites = {
    'fleet-data': () => import('./fleet-data.js'),
    'metric-pull': () => import('./metric-pull.js'),
    alerts: () => import('./alerts.js'),
    scoring: () => import('./scoring.js'),
    'refresh-memory': () => import('./refresh-memory.js'),
    'chat-memory': () => import('./chat-memory.js'),
    'puller-memory': () => import('./puller-memory.js'),
    issues: () => import('./issues.js'),
    scrape: () => import('./scrape.js'),
    llm: () => import('./llm.js'),
    tickets: () => import('./tickets.js'),
    console: () => import('./console.js'),
  };
  for (const [name, load] of Object.entries(suites)) {
    if (!wanted(name)) continue;
    const suite = await load();
    console.log(`\n${suite.title}`);
    await freshTables();
    await suite.run({ report, freshTables });
  }
  console.log('\n| suite | measure | value |\n|---|---|---|');
  for (const r of rows) console.log(`| ${r.suite} | ${r.measure} | ${r.value} |`);
} finally {
  await dynamo.stop();
}
