// `npm start`: runs the whole service locally with no AWS account.
// Settings (all optional): PORT, DATA_DIR, ADMIN_USERNAME, ADMIN_EMAIL,
// ADMIN_PASSWORD, JWT_SECRET, STAGE, CORS_ORIGINS, LOG_LEVEL.
import { startLocalService } from './service.js';

const port = Number(process.env.PORT ?? 3000);
const dataDir = process.env.DATA_DIR ?? '.data';

const service = await startLocalService({
  port,
  dataDir,
  adminUsername: process.env.ADMIN_USERNAME || undefined,
  adminEmail: process.env.ADMIN_EMAIL || undefined,
  adminPassword: process.env.ADMIN_PASSWORD || undefined,
}).catch((error: unknown) => {
  console.error(`Could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

if (service.generatedAdminPassword) {
  console.log(`Bootstrap superadmin created: ${service.adminUsername} / ${service.generatedAdminPassword}`);
  console.log('  (shown once; set ADMIN_PASSWORD before the first start to choose it)');
}
console.log(`Fleet Health Service at ${service.url}  (API: ${service.url}/api/health-check, data in ${dataDir})`);

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping`);
  await service.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGHUP', () => void shutdown('SIGHUP'));
