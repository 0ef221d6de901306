// Moved to shared/config/secrets.ts; kept until every importer points there.
export { forgetSecrets, secret } from '../config/secrets.js';
