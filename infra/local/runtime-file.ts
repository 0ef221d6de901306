// The file a running `npm start` keeps under DATA_DIR (local-service.json): where the service is and what its
// workers reach. The CLIs (invoke, ingest) find the service through it, on whatever port it took (PORT=0 too),
// rather than guess localhost:PORT from their own environment.
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { commandLineOf } from './processes.js';

export const RUNTIME_FILE = 'local-service.json';

export interface RuntimeInfo {
  pid: number;
  url: string;
  dynamoEndpoint: string;
  tablePrefix: string;
}

/** Where the file for `dataDir` is. */
export const runtimeFileOf = (dataDir: string) => join(resolve(dataDir), RUNTIME_FILE);

/**
 * The service running on `dataDir`: `missing` without its file, `stopped` when the process that wrote it is gone
 * (a service killed outright leaves it behind), its pid now another program's included.
 */
export async function runningService(dataDir: string): Promise<RuntimeInfo | 'missing' | 'stopped'> {
  const text = await readFile(runtimeFileOf(dataDir), 'utf8').catch(() => undefined);
  if (text === undefined) return 'missing';
  const runtime = JSON.parse(text) as RuntimeInfo;
  return commandLineOf(runtime.pid)?.includes('node') ? runtime : 'stopped';
}
