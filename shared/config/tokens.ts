// Access tokens: their lifetime. The signing key is the JWT_SECRET secret
// (shared/config/secrets.ts); every route group verifies tokens.
import { defineSettings, whole } from './env.js';

export const tokenSettings = defineSettings(
  'tokens',
  {
    JWT_TTL_SECONDS: whole('JWT_TTL_SECONDS', 43_200, 60, 30 * 86_400, ' of seconds'),
  },
  { secrets: ['JWT_SECRET'] },
);
