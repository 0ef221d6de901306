import * as z from '../zod.js';
import { ADMIN_UP, ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { PatrolReportSchema, PatrolReportSummarySchema } from '../patrol/schemas.js';
import { Page, PageSize } from './common.js';
import { DaysInRange } from './days.js';

export const PatrolTriggerBody = z.lazy(() =>
  z._default(z.strictObject({ report_type: z._default(z.enum(['on_demand', 'scheduled']), 'on_demand') }), { report_type: 'on_demand' }),
);

// Answers (spec §2 Patrol report, §4 Patrol; DESIGN §7 parsed fields).
const Int = z.int();
const Count = z.count();
// The report is defined once in shared/patrol/schemas.ts (the repository's record is its type).
const Stamp = { source: z.literal('live'), generated_at: z.string() }; // spec §1: data computed from live data
const TriggerAnswer = z.lazy(() =>
  z.union([
    z.object({
      status: z.literal('completed'),
      report_id: z.string(),
      tool_rounds: Count,
      total_tokens: Count,
      duration_seconds: z.number(),
      message: z.string(),
    }),
    z.object({ status: z.enum(['running', 'failed']), report_id: z.string(), message: z.string() }),
    z.object({ status: z.literal('already_running'), report_id: z.nullable(z.string()) }),
  ]),
);

export const patrolGroup = defineGroup({
  name: 'patrol',
  config: ['patrol', 'edge'],
  // llm-usage: a stopped scan's report is marked failed with what the ledger charged for its calls (shared/patrol/lock.ts).
  tables: { users: 'read', patrol: 'readwrite', locks: 'readwrite', audit: 'append', 'llm-usage': 'read' },
  leases: ['patrol'],
  grants: ['invoke:patrol-worker'],
  routes: {
    list: {
      method: 'GET',
      path: '/api/patrol',
      summary: 'Patrol reports',
      auth: 'user',
      roles: ANY_ROLE,
      query: z.lazy(() => z.object({ days: DaysInRange(90), page: Page, page_size: PageSize })),
      response: z.lazy(() => z.object({ reports: z.array(PatrolReportSummarySchema), total: Count, page: Int, page_size: Int, ...Stamp })),
    },
    latest: {
      method: 'GET',
      path: '/api/patrol/latest',
      summary: 'Most recent report with parsed fields',
      auth: 'user',
      roles: ANY_ROLE,
      response: PatrolReportSchema,
      // 404: no completed report yet.
      problems: [404],
    },
    kpis: {
      method: 'GET',
      path: '/api/patrol/kpis/summary',
      summary: 'Patrol KPIs over 30 days',
      auth: 'user',
      roles: ANY_ROLE,
      response: z.lazy(() =>
        z.object({
          total_reports: Count,
          total_tokens: Count,
          avg_duration_s: z.number(),
          total_cost_usd: z.number(),
          latest_report_at: z.nullable(z.string()),
          /** Beyond the contract: how often the scheduled scan runs, when the last one started (30 days), when the next is due. */
          scheduled_every_minutes: Count,
          last_scheduled_at: z.nullable(z.string()),
          next_scheduled_at: z.nullable(z.string()),
          ...Stamp,
        }),
      ),
    },
    get: {
      method: 'GET',
      path: '/api/patrol/{report_id}',
      summary: 'One patrol report',
      auth: 'user',
      roles: ANY_ROLE,
      params: z.object({ report_id: z.string().check(z.minLength(1), z.maxLength(128)) }),
      response: PatrolReportSchema,
    },
    trigger: {
      method: 'POST',
      path: '/api/patrol/trigger',
      summary: 'Run a patrol scan (one at a time)',
      auth: 'user',
      roles: ADMIN_UP,
      body: PatrolTriggerBody,
      response: TriggerAnswer,
      accepted: TriggerAnswer,
    },
  },
});
