// Structured JSON logs, one line per event, with the route group as `service`.
// Callers pass facts, never secrets: headers and bodies are not logged.
type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: Infinity };

export function createLogger(service: string) {
  const threshold = ORDER[(process.env.LOG_LEVEL ?? 'info') as Level] ?? ORDER.info;
  const write = (level: Level, message: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[level] < threshold) return;
    const line = JSON.stringify({ level, service, message, time: new Date().toISOString(), ...fields });
    (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(`${line}\n`);
  };
  return {
    debug: (m: string, f?: Record<string, unknown>) => write('debug', m, f),
    info: (m: string, f?: Record<string, unknown>) => write('info', m, f),
    warn: (m: string, f?: Record<string, unknown>) => write('warn', m, f),
    error: (m: string, f?: Record<string, unknown>) => write('error', m, f),
  };
}
export type Logger = ReturnType<typeof createLogger>;

/** What may be logged of an error: name and message, plus the stack for 5xx diagnosis. */
export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) return { error: error.name, error_message: error.message, stack: error.stack };
  return { error: String(error) };
}
