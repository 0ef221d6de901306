// `npm start`: runs the whole service locally with no AWS account.
// Settings (all optional): PORT, DATA_DIR, ADMIN_USERNAME, ADMIN_EMAIL,
// ADMIN_PASSWORD, JWT_SECRET, INGEST_TOKEN, DEMO_CLUSTERS, STAGE, CORS_ORIGINS, LOG_LEVEL.
import { startLocalService } from './service.js';

// Lambda runs Node 22; the SDK's notice about Node 20 is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const port = Number(process.env.PORT ?? 3000);
const dataDir = process.env.DATA_DIR ?? '.data';
const demoClusters = Number(process.env.DEMO_CLUSTERS ?? 60);
if (!Number.isInteger(demoClusters) || demoClusters < 0) {
  console.error(`DEMO_CLUSTERS must be a whole number ≥ 0, not ${process.env.DEMO_CLUSTERS}`);
  process.exit(1);
}

const service = await startLocalService({
  port,
  dataDir,
  adminUsername: process.env.ADMIN_USERNAME || undefined,
  adminEmail: process.env.ADMIN_EMAIL || undefined,
  adminPassword: process.env.ADMIN_PASSWORD || undefined,
  demoClusters,
}).catch((error: unknown) => {
  console.error(`Could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

if (service.generatedAdminPassword) {
  console.log(`Bootstrap superadmin created: ${service.adminUsername} / ${service.generatedAdminPassword}`);
  console.log('  (shown once; set ADMIN_PASSWORD before the first start to choose it)');
}
if (service.demo) {
  const d = service.demo;
  console.log(`Demo fleet loaded: ${d.clusters} clusters, ${d.samples} metric samples, ${d.alerts} alert notifications, ${d.logs} log events`);
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
