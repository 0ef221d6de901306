// The one reader of the process environment. Each concern (core, tokens, ldap,
// llm, …) declares its variables here with a zod schema: the raw values are read
// and validated together on first use and kept for the container's life, and a
// bad value is an error naming the variable. Nothing outside shared/config/
// reads process.env (the local runtime's start-up aside).
import * as z from '../zod.js';

/** Raw variables: a subset of the environment (tests pass their own). */
export type Env = Readonly<Record<string, string | undefined>>;

/** A setting whose value is wrong: the message names the variable and says what it must be (never echoing a value). */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface SettingsOptions<V, T> {
  /** Turns a validation failure into the error callers answer with (e.g. a 503 for an optional integration). */
  readonly failure?: (message: string) => Error;
  /** Derives the settings object from the validated variables (and may throw `failure` errors itself). */
  readonly derive?: (vars: V) => T;
  /** The secrets this concern reads (shared/config/secrets.ts): the stack creates each and grants it to the functions declaring the concern. */
  readonly secrets?: readonly string[];
}

export interface Settings<T> {
  readonly concern: string;
  /** Every plain variable the concern reads. */
  readonly variables: readonly string[];
  /** The secrets it reads: each is `NAME` locally or `NAME_ARN` (a Secrets Manager secret) on AWS. */
  readonly secrets: readonly string[];
  /** The validated settings of this process, read once and kept. */
  (): T;
  /** The validated settings of `env` (not cached): for tests and for checks of another environment. */
  from(env: Env): T;
}

const concerns = new Map<string, { forget(): void; check(env: Env): void }>();

/** The process environment, for shared/config/ modules only. */
export function processEnv(): Env {
  return process.env;
}

/** An environment value as settings read it: trimmed, and blank as unset (`X=` means "default"). */
export function envValue(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === '' ? undefined : trimmed;
}

/**
 * Declares a concern's settings. Blank values count as unset (a stack or shell
 * that sets `X=` means "default"), and values are trimmed. The shape is built on the
 * concern's first read, not at import: a route group declares every concern its
 * routes may read, and a cold start should build only the schemas its first request
 * uses (each zod schema is about 2 KB and a few µs; issue 21 §4, test/bench/README.md).
 */
export function defineSettings<S extends z.core.$ZodShape, T = z.output<z.ZodMiniObject<S>>>(
  concern: string,
  shape: () => S,
  options: SettingsOptions<z.output<z.ZodMiniObject<S>>, T> = {},
): Settings<T> {
  const secrets = options.secrets ?? [];
  let built: { schema: z.ZodMiniObject<S>; names: readonly string[]; variables: readonly string[] } | undefined;
  const declared = () => {
    if (!built) {
      const fields = shape();
      const names = Object.keys(fields);
      const variables = names.filter((name) => !secrets.some((secret) => name === secret || name === `${secret}_ARN`));
      built = { schema: z.object(fields), names, variables };
    }
    return built;
  };
  const fail = options.failure ?? ((message: string) => new ConfigError(message));
  const from = (env: Env): T => {
    const { schema, names } = declared();
    const raw: Record<string, string | undefined> = {};
    for (const name of names) raw[name] = envValue(env[name]);
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw fail(describeIssues(parsed.error));
    return options.derive ? options.derive(parsed.data) : (parsed.data as T);
  };
  let cached: { value: T } | undefined;
  const read = (() => {
    cached ??= { value: from(processEnv()) };
    return cached.value;
  }) as Settings<T>;
  Object.assign(read, { concern, secrets, from });
  Object.defineProperty(read, 'variables', { get: () => declared().variables, enumerable: true });
  concerns.set(concern, { forget: () => (cached = undefined), check: (env) => void from(env) });
  return read;
}

/** "LLM_TIMEOUT_MS must be … LDAP_URL: …": each sentence names its variable first. */
function describeIssues(error: z.core.$ZodError): string {
  return error.issues
    .map((issue) => {
      const name = String(issue.path[0] ?? '');
      const sentence = issue.message.startsWith(name) ? issue.message : `${name}: ${issue.message}`;
      return sentence.endsWith('.') ? sentence : `${sentence}.`;
    })
    .join(' ');
}

/** Validates every declared concern against `env` (the local runtime's start-up): one message listing each bad variable. */
export function checkSettings(names: readonly string[], env: Env = processEnv()): void {
  const problems: string[] = [];
  for (const name of names) {
    const concern = concerns.get(name);
    if (!concern) throw new ConfigError(`unknown settings concern ${name}`);
    try {
      concern.check(env);
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  }
  if (problems.length) throw new ConfigError(problems.join(' '));
}

/** Forgets every cached setting, so the next read sees the environment as it is now (tests that change it). */
export function resetSettings(): void {
  for (const concern of concerns.values()) concern.forget();
  for (const forget of resetHooks) forget();
}

const resetHooks = new Set<() => void>();
/** Caches derived from settings (secrets, signing keys, clients) forget themselves with the settings. */
export function onSettingsReset(forget: () => void): void {
  resetHooks.add(forget);
}

// ── Schema helpers shared by the concerns ─────────────────────────────────────

/**
 * A number written in decimal digits (`12`, `0.5`, `.5`), at most 32 characters, read as a number. Not what `Number`
 * also reads: `0x10` (16), `0b11`, `1e3`, `Infinity`, nor a fraction so long that it reads as 0 (`0.000…1`, 400
 * zeros), which for a budget meant no limit at all; the message says what the variable must be.
 */
const decimal = (message: string) =>
  z.pipe(z.string().check(z.regex(/^(?=.{1,32}$)(\d+\.?\d*|\.\d+)$/, { error: message })), z.coerce.number({ error: message }));

/** A whole number within bounds, with its default; the message says the range in words. */
export const whole = (
  name: string,
  fallback: number,
  min: number,
  max: number,
  unit = '',
  message = `${name} must be a whole number${unit} from ${min} to ${max}.`,
) =>
  z._default(z.pipe(decimal(message), z.number().check(z.int({ error: message }), z.gte(min, { error: message }), z.lte(max, { error: message }))), fallback);

/** A number of seconds (fractions allowed) within bounds, with its default. */
export const seconds = (name: string, fallback: number, min: number, max: number) => {
  const message = `${name} must be a number of seconds from ${min} to ${max}.`;
  return z._default(z.pipe(decimal(message), z.number().check(z.gte(min, { error: message }), z.lte(max, { error: message }))), fallback);
};

/** A daily budget in US dollars from 0 (no limit) to 100,000, with its default. */
export const usdBudget = (name: string, fallback: number) => {
  const message = `${name} must be a number of US dollars from 0 (no limit) to 100000.`;
  return z._default(z.pipe(decimal(message), z.number().check(z.gte(0, { error: message }), z.lte(100_000, { error: message }))), fallback);
};

/** true/false (also 1/0, on/off, yes/no), with its default. */
export const flag = (name: string, fallback: boolean) =>
  z.pipe(
    z.optional(z.enum(['true', 'false', '1', '0', 'on', 'off', 'yes', 'no'], { error: `${name} must be true or false` })),
    z.transform((v) => (v === undefined ? fallback : ['true', '1', 'on', 'yes'].includes(v))),
  );

/** A transform that parses JSON text; text that is not JSON is the issue `message` (what a transform may not throw). */
export const jsonOf =
  (message: string) =>
  (raw: string, ctx: z.core.ParsePayload): unknown => {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      ctx.issues.push({ code: 'custom', message, input: raw });
      return z.NEVER;
    }
  };

/** An optional free text. */
export const text = () => z.optional(z.string());
