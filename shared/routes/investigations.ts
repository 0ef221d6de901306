import * as z from '../zod.js';
import { ANY_ROLE } from '../auth/roles.js';
import { AgentTaskSchema, InvestigationSchema, InvestigationSummarySchema } from '../agents/schemas.js';
import { defineGroup } from '../http/route.js';
import { AnyCase, ClusterIdFilter, Page, PageSize, Text } from './common.js';
import { DaysInRange } from './days.js';

export const InvestigationListQuery = z.lazy(() =>
  z.object({
    days: DaysInRange(30),
    severity: z._default(AnyCase(['', 'critical', 'warning', 'info']), ''),
    customer: z._default(Text(200), ''),
    /** Beyond the contract: one cluster's investigations (its id, matched exactly), for the console's cluster page. */
    cluster_id: ClusterIdFilter(),
    page: Page,
    page_size: PageSize,
  }),
);

// Answers (spec §2 Investigation, Agent task; §4 Investigations).
const Int = z.int();
const Count = z.count();
const Stamp = { source: z.literal('live'), generated_at: z.string() }; // spec §1: data computed from live data
// The investigation and the task are defined once in shared/agents/schemas.ts (the repository's records derive from them).

export const investigationsGroup = defineGroup({
  name: 'investigations',
  tables: { users: 'read', investigations: 'read' },
  routes: {
    list: {
      method: 'GET',
      path: '/api/investigations',
      summary: 'Agent investigations',
      auth: 'user',
      roles: ANY_ROLE,
      query: InvestigationListQuery,
      response: z.lazy(() => z.object({ investigations: z.array(InvestigationSummarySchema), total: Count, page: Int, page_size: Int, ...Stamp })),
    },
    kpis: {
      method: 'GET',
      path: '/api/investigations/kpis',
      summary: 'Investigation KPIs',
      auth: 'user',
      roles: ANY_ROLE,
      query: z.lazy(() => z.object({ days: DaysInRange(30) })),
      response: z.lazy(() =>
        z.object({
          total_investigations: Count,
          critical_count: Count,
          warning_count: Count,
          info_count: Count,
          total_tokens: Count,
          avg_confidence: z.number(),
          avg_duration_s: z.number(),
          total_cost_usd: z.number(),
          ...Stamp,
        }),
      ),
    },
    pendingTasks: {
      method: 'GET',
      path: '/api/investigations/pending-tasks',
      summary: 'Agent tasks pending or running',
      auth: 'user',
      roles: ANY_ROLE,
      response: z.lazy(() => z.object({ tasks: z.array(AgentTaskSchema).check(z.maxLength(50)), total: Count, ...Stamp })),
    },
    get: {
      method: 'GET',
      path: '/api/investigations/{investigation_id}',
      summary: 'One investigation with its full report',
      auth: 'user',
      roles: ANY_ROLE,
      params: z.object({ investigation_id: z.string().check(z.minLength(1), z.maxLength(128)) }),
      response: InvestigationSchema,
    },
  },
});
