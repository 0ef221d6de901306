// `npm run invoke -- <function> [payload.json | -]`: invokes one Lambda
// function of the stack (a worker such as recompute or patrol-worker, or a
// route group with an API Gateway event) against the running `npm start`, with
// the event `aws lambda invoke --payload` would send, and prints what the
// handler returned, as `aws lambda invoke` writes it to its outfile.
// Workers the function starts (recompute starts the agent worker) run in this
// process and are waited for before it exits.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { text } from 'node:stream/consumers';
import { invocationDir, readLocalSettings } from './settings.js';
import { declaredFunctions } from './functions.js';
import { runningService, runtimeFileOf } from './runtime-file.js';

const usage = `usage: npm run invoke -- <function> [payload.json | -]
  functions: ${declaredFunctions().join(', ')}
  payload: a JSON file, - for standard input, or none for {}`;

async function main(): Promise<number> {
  const [name, payloadArg, ...extra] = process.argv.slice(2);
  if (name === '--help' || name === '-h') {
    console.log(usage);
    return 0;
  }
  if (!name || extra.length) {
    console.error(extra.length ? `one payload at most, not ${[payloadArg, ...extra].join(' ')}\n${usage}` : usage);
    return 2;
  }
  if (!declaredFunctions().includes(name)) {
    console.error(`no function named ${name}\n${usage}`);
    return 2;
  }
  let payloadText = '{}';
  if (payloadArg === '-') payloadText = await text(process.stdin);
  else if (payloadArg !== undefined) {
    const path = resolve(invocationDir(), payloadArg);
    try {
      payloadText = await readFile(path, 'utf8');
    } catch (error) {
      console.error(`cannot read the payload ${path}: ${(error as Error).message}`);
      return 2;
    }
  }
  let event: unknown;
  try {
    event = JSON.parse(payloadText);
  } catch (error) {
    console.error(`the payload is not JSON: ${(error as Error).message}`);
    return 2;
  }

  const { dataDir } = readLocalSettings();
  // Imported here, not statically: the service's modules read settings as they load (a logger its LOG_LEVEL), and a bad
  // one is then reported below as Lambda reports an init error, not as a stack trace before main runs.
  const { applyLocalEnvironment } = await import('./service.js');
  const runtime = await runningService(dataDir);
  if (runtime === 'missing') {
    console.error(`no running service found (${runtimeFileOf(dataDir)} is missing): start it with npm start (same DATA_DIR) first`);
    return 1;
  }
  if (runtime === 'stopped') {
    console.error(`the service that wrote ${runtimeFileOf(dataDir)} is not running: start it with npm start first`);
    return 1;
  }

  await applyLocalEnvironment({ dataDir: resolve(dataDir), dynamoEndpoint: runtime.dynamoEndpoint, tablePrefix: runtime.tablePrefix });
  // Imported only now: the handlers read their settings from the environment.
  const { invokeLocal, registerLocalWorkers } = await import('./functions.js');
  const { localWorkersSettled } = await import('../../shared/worker-invoke.js');
  await registerLocalWorkers();
  const result = await invokeLocal(name, event);
  console.log(JSON.stringify(result ?? null, null, 2));
  await localWorkersSettled();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    // As Lambda reports an unhandled error: its type and message, exit status 1.
    const e = error instanceof Error ? error : new Error(String(error));
    console.error(JSON.stringify({ errorType: e.name, errorMessage: e.message }));
    process.exit(1);
  },
);
