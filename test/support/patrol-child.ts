// A patrol worker in a process of its own (`node --import tsx test/support/patrol-child.ts <report_id>`), with the
// environment of the test that starts it (its tables, its LLM server): a test can kill it mid-scan, as Lambda ends
// a worker at its timeout or out of memory, where no `finally` of the scan runs.
import { runPatrolScan } from '../../shared/patrol/run.js';

const [reportId] = process.argv.slice(2);
await runPatrolScan({ report_type: 'on_demand', triggered_by: 'killed-worker', ...(reportId ? { report_id: reportId } : {}) });
