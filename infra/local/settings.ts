// The settings of `npm start`, declared and validated in one place: every
// variable the local runtime reads (the handlers read theirs through their own
// config), with its default. A bad value stops the start with a clear line.
import { envValue, flag, whole } from '../../shared/config/env.js';
import { ActivateBody } from '../../shared/routes/auth.js';
import * as z from '../../shared/zod.js';
import { scheduledWorkers, type WorkerName } from '../../shared/workers.js';

/** An interval of the local timers: whole seconds, 1 s to 7 days. */
const everySeconds = (name: string, fallback: number) => whole(name, fallback, 1, 7 * 86_400, ' of seconds');

/** LOCAL_<WORKER>_EVERY_SECONDS, e.g. LOCAL_RECOMPUTE_EVERY_SECONDS, LOCAL_PATROL_WORKER_EVERY_SECONDS. */
export const intervalVariable = (name: string) => `LOCAL_${name.toUpperCase().replace(/-/g, '_')}_EVERY_SECONDS`;

/**
 * Where npm start keeps the ingest token under DATA_DIR (unless INGEST_TOKEN is set), which `npm run ingest` reads.
 * Here, not in service.ts: the ingest CLI loads none of the service, whose modules read its settings as they load.
 */
export const INGEST_TOKEN_FILE = 'ingest-token';

/**
 * Where the command was typed: npm runs a script in the package's folder and names the caller's in INIT_CWD, so a
 * file a command line names (`npm run invoke -- fleet event.json`, `npm run ingest -- data.jsonl`) is read from there.
 * DATA_DIR stays relative to the package, as npm start reads it.
 */
export function invocationDir(env: NodeJS.ProcessEnv = process.env): string {
  return envValue(env.INIT_CWD) ?? process.cwd();
}

/** The largest demo fleet `npm start` loads. */
export const MAX_DEMO_CLUSTERS = 10_000;

const LocalEnv = z.object({
  PORT: whole('PORT', 3000, 0, 65_535, '', 'PORT must be a whole number from 0 to 65535 (0: any free port).'),
  DATA_DIR: z._default(z.string(), '.data'),
  ADMIN_USERNAME: z.optional(z.string()),
  ADMIN_EMAIL: z.optional(z.string()),
  // The password rule of activation (8 to 1,024 characters): login refuses one longer, and nobody else may choose a shorter one.
  ADMIN_PASSWORD: z.optional(z.unlazy(ActivateBody).shape.password),
  DEMO_CLUSTERS: whole('DEMO_CLUSTERS', 60, 0, MAX_DEMO_CLUSTERS),
  // On by default, but only ever with a demo fleet (readLocalSettings).
  DEMO_FEED: flag('DEMO_FEED', true),
  LOCAL_SCHEDULES: flag('LOCAL_SCHEDULES', true),
  LOCAL_DEMO_FEED_EVERY_SECONDS: everySeconds('LOCAL_DEMO_FEED_EVERY_SECONDS', 300),
});

/**
 * Where `npm start` on this environment keeps its data and listens (PORT and DATA_DIR alone, checked as npm start
 * checks them): what `npm run dev` needs to find it, without refusing some other setting it never reads.
 */
export function localServiceAddress(env: NodeJS.ProcessEnv = process.env): { port: number; dataDir: string } {
  const parsed = z.pick(LocalEnv, { PORT: true, DATA_DIR: true }).safeParse({ PORT: envValue(env.PORT), DATA_DIR: envValue(env.DATA_DIR) });
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => i.message).join('; '));
  return { port: parsed.data.PORT, dataDir: parsed.data.DATA_DIR };
}

export interface LocalSettings {
  port: number;
  dataDir: string;
  adminUsername?: string;
  adminEmail?: string;
  adminPassword?: string;
  demoClusters: number;
  /** New demo samples and incidents keep arriving (only with a demo fleet). */
  demoFeed: boolean;
  demoFeedEverySeconds: number;
  /** undefined: local schedules off (LOCAL_SCHEDULES=false). */
  schedules?: Partial<Record<WorkerName, number>>;
}

/** Reads and validates the local runtime's settings; throws one message naming every bad variable. */
export function readLocalSettings(env: NodeJS.ProcessEnv = process.env): LocalSettings {
  const intervals = Object.fromEntries(
    scheduledWorkers().map(({ name, schedule }) => [intervalVariable(name), everySeconds(intervalVariable(name), schedule.everyMinutes * 60)]),
  );
  // Read as every concern's settings are (shared/config/env.ts): trimmed, blank as unset;
  // but a password is taken as typed.
  const values = Object.fromEntries(Object.entries(env).map(([name, value]) => [name, name === 'ADMIN_PASSWORD' ? value || undefined : envValue(value)]));
  const parsed = z.extend(LocalEnv, intervals).safeParse(values);
  if (!parsed.success) {
    // A message that names its variable (the shared helpers' "PORT must be …") is given as it is.
    throw new Error(
      parsed.error.issues
        .map((i) => {
          const name = i.path.join('.');
          return i.message.startsWith(`${name} `) ? i.message : `${name}: ${i.message}`;
        })
        .join('; '),
    );
  }
  const s = parsed.data as unknown as z.infer<typeof LocalEnv>;
  const every = parsed.data as unknown as Record<string, number>;
  return {
    port: s.PORT,
    dataDir: s.DATA_DIR,
    adminUsername: s.ADMIN_USERNAME,
    adminEmail: s.ADMIN_EMAIL,
    adminPassword: s.ADMIN_PASSWORD,
    demoClusters: s.DEMO_CLUSTERS,
    demoFeed: s.DEMO_FEED && s.DEMO_CLUSTERS > 0,
    demoFeedEverySeconds: s.LOCAL_DEMO_FEED_EVERY_SECONDS,
    schedules: s.LOCAL_SCHEDULES ? Object.fromEntries(scheduledWorkers().map(({ name }) => [name, every[intervalVariable(name)]!])) : undefined,
  };
}
