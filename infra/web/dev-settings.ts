// The settings of `npm run dev` (Vite's dev server for the console), checked as every other setting is: a bad value
// stops it with a line naming the variable. Unchecked, WEB_DEV_PORT=abc was Vite's "No available ports found between
// NaN and 65535", and an API_URL that is no URL started the server, whose every /api request then failed.
import { envValue } from '../../shared/config/env.js';
import * as z from '../../shared/zod.js';
import { runningService } from '../local/runtime-file.js';
import { localServiceAddress } from '../local/settings.js';

export interface DevServerSettings {
  /** WEB_DEV_PORT: the dev server's port (default 5173). */
  port: number;
  /**
   * API_URL: where it sends /api; by default the `npm start` running on DATA_DIR, wherever it listens (its
   * local-service.json, as the CLIs find it: PORT=0 or another PORT), else http://localhost:PORT (3000).
   */
  apiUrl: string;
}

/** Each variable's schema (read trimmed, blank as unset: `envValue`) and the line a bad value stops the server with. */
const SETTINGS = {
  WEB_DEV_PORT: {
    schema: z._default(z.pipe(z.string().check(z.regex(/^\d+$/)), z.pipe(z.transform(Number), z.number().check(z.gte(1), z.lte(65_535)))), 5173),
    rule: 'must be a port number from 1 to 65535.',
  },
  API_URL: {
    schema: z.optional(z.url({ protocol: /^https?$/ })),
    rule: 'must be the http(s) URL of the running service, e.g. http://localhost:3000.',
  },
};

function read<N extends keyof typeof SETTINGS>(env: NodeJS.ProcessEnv, name: N): z.output<(typeof SETTINGS)[N]['schema']> {
  const { schema, rule } = SETTINGS[name];
  const parsed = schema.safeParse(envValue(env[name]));
  if (!parsed.success) throw new Error(`${name} ${rule}`);
  return parsed.data as z.output<(typeof SETTINGS)[N]['schema']>;
}

export async function devServerSettings(env: NodeJS.ProcessEnv = process.env): Promise<DevServerSettings> {
  const port = read(env, 'WEB_DEV_PORT');
  const apiUrl = read(env, 'API_URL');
  if (apiUrl) return { port, apiUrl };
  const local = localServiceAddress(env);
  const running = await runningService(local.dataDir);
  if (typeof running === 'object') return { port, apiUrl: running.url };
  // PORT=0 names no port: only the running service's file says which it took.
  if (local.port === 0) throw new Error(`API_URL must be set: no npm start is running on DATA_DIR ${local.dataDir}, and PORT=0 names no port.`);
  return { port, apiUrl: `http://localhost:${local.port}` };
}
