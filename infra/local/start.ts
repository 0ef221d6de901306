// `npm start`: runs the whole service locally with no AWS account: the API,
// the schedules EventBridge runs on AWS, and (with the demo fleet) a feed that
// keeps it alive. Its own settings are declared in settings.ts; the handlers'
// (STAGE, CORS_ORIGINS, LOG_LEVEL, LLM_*, ...) pass through the environment.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../shared/config/env.js';
import { readLocalSettings, type LocalSettings } from './settings.js';

// Lambda runs Node 22; the SDK's notice about Node 20 is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// An output closed under it is not a reason to stop without stopping DynamoDB Local: with `npm start | tee server.log`,
// a terminal's Ctrl-C ends tee too, and the line saying the service stops met a closed pipe (EPIPE, an unhandled 'error'
// event), which ended the process before its shutdown ran and left the emulator running. Lines written after that are lost.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

let settings: LocalSettings;
try {
  settings = readLocalSettings();
} catch (error) {
  console.error(`Could not start: ${(error as Error).message}`);
  process.exit(1);
}

// Imported only now: modules of the service read their settings as they load (a logger its LOG_LEVEL, with STAGE,
// CORS_ORIGINS and the rest of the core concern), and a bad one thrown from a static import was a stack trace.
let modules: [typeof import('./service.js'), typeof import('./demo-feed.js')];
try {
  modules = await Promise.all([import('./service.js'), import('./demo-feed.js')]);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`Could not start: ${error.message}`);
  process.exit(1);
}
const [{ EMULATOR_PID_FILE, startLocalService }, { createDemoFeed }] = modules;

// Signals are handled from the start: one arriving before the service is up stops the start
// (and DynamoDB Local with it) instead of leaving the emulator running behind this process.
let service: Awaited<ReturnType<typeof startLocalService>> | undefined;
const starting = new AbortController();
let stopping: { signal: string; at: number } | undefined;
/**
 * A terminal's Ctrl-C reaches the whole foreground process group, and npm forwards what it gets to this
 * process too: one key press arrives twice, milliseconds apart. The same signal again within this window
 * is that echo, not a second press.
 */
const ECHO_WINDOW_MS = 500;
const shutdown = async (signal: string) => {
  if (stopping?.signal === signal && Date.now() - stopping.at < ECHO_WINDOW_MS) return;
  if (stopping) {
    // A second signal: whoever sent it will not wait for the runs in progress. DynamoDB Local, in a process
    // group of its own, goes too (its pid file is kept for the next start's check either way).
    console.log(`${signal} again: stopping now`);
    try {
      process.kill(Number(readFileSync(join(settings.dataDir, EMULATOR_PID_FILE), 'utf8')), 'SIGTERM');
    } catch {
      // not started yet, or gone already
    }
    process.exit(130);
  }
  stopping = { signal, at: Date.now() };
  console.log(`${signal}: stopping (runs in progress get up to 10 s; ${signal === 'SIGINT' ? 'Ctrl-C' : signal} again stops at once)`);
  if (!service) return starting.abort(); // the start's rejection below exits
  await service.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGHUP', () => void shutdown('SIGHUP'));

service = await startLocalService({
  port: settings.port,
  dataDir: settings.dataDir,
  adminUsername: settings.adminUsername,
  adminEmail: settings.adminEmail,
  adminPassword: settings.adminPassword,
  demoClusters: settings.demoClusters,
  schedules: settings.schedules,
  demoFeed: settings.demoFeed
    ? {
        everySeconds: settings.demoFeedEverySeconds,
        tick: createDemoFeed({ dataDir: settings.dataDir, clusters: settings.demoClusters, log: (line) => console.log(line) }).tick,
      }
    : undefined,
  signal: starting.signal,
  onProgress: (step) => console.log(`${step}…`),
  // Without its database nothing works, and nothing would say so but failing requests: stop, saying why.
  onEmulatorExit: (how) => {
    if (stopping) return;
    stopping = { signal: 'emulator', at: Date.now() };
    console.error(`DynamoDB Local, the service's database, ended (${how}): stopping. Run npm start again; the data in ${settings.dataDir} is kept.`);
    void service?.stop().finally(() => process.exit(1));
  },
}).catch((error: unknown) => {
  if (starting.signal.aborted) process.exit(0);
  console.error(`Could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
// A signal during the start's last steps, after its last DynamoDB call: the start succeeded, and stops now.
if (starting.signal.aborted) {
  await service.stop();
  process.exit(0);
}

if (service.generatedAdminPassword) {
  console.log(`Bootstrap superadmin created: ${service.adminUsername} / ${service.generatedAdminPassword}`);
  console.log('  (set ADMIN_PASSWORD before the first start to choose it)');
}
if (service.adminPasswordFile) {
  console.log(`  The generated password is kept in ${service.adminPasswordFile} (mode 600): change it under "Your account", then delete the file.`);
}
if (service.demoIncomplete) {
  console.log(`The demo fleet's load was cut short on an earlier start: its clusters lack part of their history. Delete ${settings.dataDir} to load it whole.`);
}
if (service.demo) {
  const d = service.demo;
  console.log(`Demo fleet loaded: ${d.clusters} clusters, ${d.samples} metric samples, ${d.alerts} alert notifications, ${d.logs} log events`);
}
/** An interval as a person reads it: 6 h, 15 min, 45 s (21600 s was to be divided in one's head). */
const every = (seconds: number) => (seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`);
// One write, so whoever reads the output (a terminal, a pipe) gets the whole banner at once.
const banner = [
  `Fleet Health Service at ${service.url}  (API: ${service.url}/api/health-check, data in ${settings.dataDir})`,
  settings.schedules
    ? `Schedules: ${Object.entries(settings.schedules)
        .map(([name, s]) => `${name} every ${every(s)}`)
        .join(', ')} (LOCAL_SCHEDULES=false turns them off)`
    : 'Schedules: off (LOCAL_SCHEDULES=false)',
  ...(settings.demoFeed ? [`Demo feed: new samples and incidents every ${every(settings.demoFeedEverySeconds)} (DEMO_FEED=false turns it off)`] : []),
];
console.log(banner.join('\n'));
