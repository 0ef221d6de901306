// Moved to shared/config/core.ts; kept until every importer points there.
import { coreSettings } from './config/core.js';

export const corsOrigins = (): string[] => coreSettings().corsOrigins;
export { resetSettings as resetConfig } from './config/env.js';
