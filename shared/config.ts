// Environment settings shared by every Lambda, read once and validated.
import * as z from 'zod';

const Settings = z.object({
  STAGE: z.enum(['dev', 'prod']).default('dev'),
  CORS_ORIGINS: z.string().default(''),
  SERVICE_NAME: z.string().default('fleet-health'),
});

let settings: z.infer<typeof Settings> | undefined;

export function config(): z.infer<typeof Settings> {
  settings ??= Settings.parse({
    STAGE: process.env.STAGE || undefined,
    CORS_ORIGINS: process.env.CORS_ORIGINS || undefined,
    SERVICE_NAME: process.env.SERVICE_NAME || undefined,
  });
  return settings;
}

/** Origins allowed by CORS: every origin in development, the allowlist in production. */
export function corsOrigins(): string[] {
  const { STAGE, CORS_ORIGINS } = config();
  if (STAGE !== 'prod') return ['*'];
  return CORS_ORIGINS.split(',')
    .map((o) => o.trim())
    .filter(Boolean);
}

/** For tests that change the environment between cases. */
export function resetConfig(): void {
  settings = undefined;
}
