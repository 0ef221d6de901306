// POST /api/patrol/trigger (issue 9): takes the patrol lock for a new report,
// starts the patrol worker asynchronously, and waits a while for it (startAndWait
// in shared/worker-invoke.ts, like the refresh routes). Kept apart from the scan
// itself, so the patrol route group carries no LLM or SQL code.
import { randomUUID } from 'node:crypto';
import type { Caller } from '../auth/caller.js';
import { patrolSettings } from '../config/patrol.js';
import { writeAudit } from '../db/audit.js';
import { lockHolder, releaseLock } from '../db/locks.js';
import { createReport, finishReport, getReport } from '../db/patrol.js';
import type { Principal } from '../auth/principal.js';
import { invokeWorker, startAndWait } from '../worker-invoke.js';
import { PATROL_LOCK, settled, takeLock } from './lock.js';

/** How long the trigger waits for the scan before answering 202: at most 20 s, well inside the route's 29 s. */
export function waitMs(): number {
  return patrolSettings().waitMs;
}

/** POST /api/patrol/trigger. */
export async function triggerPatrol(principal: Principal, reportType: string, caller: Caller) {
  const reportId = randomUUID();
  if (!(await takeLock(reportId))) return { status: 'already_running' as const, report_id: (await lockHolder(PATROL_LOCK))?.owner ?? null };
  const report = await startAndWait({
    start: async () => {
      try {
        await createReport({ report_id: reportId, report_type: reportType, triggered_by: principal.username });
        await writeAudit({
          actor: principal.username,
          role: principal.role,
          action: 'patrol_trigger',
          target: reportId,
          detail: { report_type: reportType },
          ip: caller.ip,
          user_agent: caller.userAgent,
        });
        await invokeWorker('patrol-worker', { report_id: reportId, report_type: reportType, triggered_by: principal.username });
      } catch (error) {
        await finishReport(reportId, { status: 'failed', error: 'the scan could not start (see the patrol logs)' }).catch(() => undefined);
        await releaseLock(PATROL_LOCK, reportId);
        throw error;
      }
    },
    // A worker that died (it let the lock go without finishing) has its report marked failed: no point waiting.
    poll: async () => {
      const report = await getReport(reportId);
      return report && settled(report);
    },
    done: (report) => report.status !== 'running',
    waitMs: waitMs(),
    intervalMs: 250,
  });
  if (report?.status === 'completed') {
    return {
      status: 'completed' as const,
      report_id: reportId,
      tool_rounds: report.tool_rounds,
      total_tokens: report.total_tokens,
      duration_seconds: report.duration_seconds,
      message: `Patrol ${report.model === 'rules' ? '(rules engine) ' : ''}flagged ${report.flagged_count} cluster${report.flagged_count === 1 ? '' : 's'}.`,
    };
  }
  if (report?.status === 'failed') return { status: 'failed' as const, report_id: reportId, message: report.error ?? 'the scan failed' };
  return { status: 'running' as const, report_id: reportId, message: 'The scan is still running: poll GET /api/patrol/{report_id}.' };
}
