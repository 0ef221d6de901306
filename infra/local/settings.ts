// The settings of `npm start`, declared and validated in one place: every
// variable the local runtime reads (the handlers read theirs through their own
// config), with its default. A bad value stops the start with a clear line.
import { envValue } from '../../shared/config/env.js';
import { ActivateBody } from '../../shared/routes/auth.js';
import * as z from '../../shared/zod.js';
import { scheduledWorkers, type WorkerName } from '../../shared/workers.js';

const flag = (fallback: boolean) => {
  const value = z.optional(z.enum(['true', 'false', '1', '0', 'on', 'off', 'yes', 'no', '']));
  return z.pipe(
    value,
    z.transform((v: z.output<typeof value>) => (v === undefined || v === '' ? fallback : ['true', '1', 'on', 'yes'].includes(v))),
  );
};

const seconds = z.optional(z.coerce.number().check(z.int(), z.gte(1), z.lte(7 * 86_400)));

/** LOCAL_<WORKER>_EVERY_SECONDS, e.g. LOCAL_RECOMPUTE_EVERY_SECONDS, LOCAL_PATROL_WORKER_EVERY_SECONDS. */
export const intervalVariable = (name: string) => `LOCAL_${name.toUpperCase().replace(/-/g, '_')}_EVERY_SECONDS`;

/**
 * Where npm start keeps the ingest token under DATA_DIR (unless INGEST_TOKEN is set), which `npm run ingest` reads.
 * Here, not in service.ts: the ingest CLI loads none of the service, whose modules read its settings as they load.
 */
export const INGEST_TOKEN_FILE = 'ingest-token';

/** The largest demo fleet `npm start` loads. */
export const MAX_DEMO_CLUSTERS = 10_000;

const LocalEnv = z.object({
  PORT: z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(65_535)), 3000),
  DATA_DIR: z._default(z.string(), '.data'),
  ADMIN_USERNAME: z.optional(z.string()),
  ADMIN_EMAIL: z.optional(z.string()),
  // The password rule of activation (8 to 1,024 characters): login refuses one longer, and nobody else may choose a shorter one.
  ADMIN_PASSWORD: z.optional(z.unlazy(ActivateBody).shape.password),
  DEMO_CLUSTERS: z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(MAX_DEMO_CLUSTERS)), 60),
  DEMO_FEED: z.optional(z.string()),
  LOCAL_SCHEDULES: flag(true),
  LOCAL_DEMO_FEED_EVERY_SECONDS: z._default(seconds, 300),
});

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
  const intervals = Object.fromEntries(scheduledWorkers().map(({ name }) => [intervalVariable(name), seconds]));
  // Read as every concern's settings are (shared/config/env.ts): trimmed, blank as unset;
  // but a password is taken as typed.
  const values = Object.fromEntries(Object.entries(env).map(([name, value]) => [name, name === 'ADMIN_PASSWORD' ? value || undefined : envValue(value)]));
  const parsed = z.extend(LocalEnv, intervals).safeParse(values);
  if (!parsed.success) {
    throw new Error(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  }
  const s = parsed.data as z.infer<typeof LocalEnv> & Record<string, number | undefined>;
  const demoFeed = flag(s.DEMO_CLUSTERS > 0).safeParse(s.DEMO_FEED);
  if (!demoFeed.success) throw new Error(`DEMO_FEED: expected true or false, not ${s.DEMO_FEED}`);
  return {
    port: s.PORT,
    dataDir: s.DATA_DIR,
    adminUsername: s.ADMIN_USERNAME,
    adminEmail: s.ADMIN_EMAIL,
    adminPassword: s.ADMIN_PASSWORD,
    demoClusters: s.DEMO_CLUSTERS,
    demoFeed: demoFeed.data && s.DEMO_CLUSTERS > 0,
    demoFeedEverySeconds: s.LOCAL_DEMO_FEED_EVERY_SECONDS,
    schedules: s.LOCAL_SCHEDULES
      ? Object.fromEntries(scheduledWorkers().map(({ name, schedule }) => [name, s[intervalVariable(name)] ?? schedule.everyMinutes * 60]))
      : undefined,
  };
}
