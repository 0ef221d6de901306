import * as z from 'zod';
import { ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { AnyCase, DaysInRange, Page, PageSize, Text } from './common.js';

export const InvestigationListQuery = z.object({
  days: DaysInRange(30),
  severity: AnyCase(['', 'critical', 'warning', 'info']).default(''),
  customer: Text(200).default(''),
  page: Page,
  page_size: PageSize,
});

// Answers (spec §2 Investigation, Agent task; §4 Investigations).
const Int = z.number().int();
const Stamp = { source: z.literal('live'), generated_at: z.string() }; // spec §1: data computed from live data
const ListItem = z.object({
  investigation_id: z.string(),
  task_id: z.string(),
  cluster_id: z.string(),
  cluster_name: z.string(),
  customer_name: z.string(),
  severity: z.enum(['critical', 'warning', 'info']),
  confidence: z.number().min(0).max(1),
  root_cause: z.string(),
  recommended_actions: z.string(),
  model: z.string(),
  input_tokens: Int,
  output_tokens: Int,
  total_tokens: Int,
  cost_usd: z.number(),
  duration_seconds: z.number(),
  created_at: z.string(),
});
const Investigation = ListItem.extend({ full_report: z.string() });
const AgentTask = z.object({
  task_id: z.string(),
  cluster_id: z.string(),
  cluster_name: z.string(),
  customer_name: z.string(),
  customer_tier: z.string(),
  trigger_reason: z.string(),
  priority: Int,
  status: z.enum(['pending', 'running']),
  created_at: z.string(),
  attempts: Int,
  last_error: z.string().nullable(),
  claimed_at: z.string().nullable(),
});

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
      response: z.object({ investigations: z.array(ListItem), total: Int, page: Int, page_size: Int, ...Stamp }),
    },
    kpis: {
      method: 'GET',
      path: '/api/investigations/kpis',
      summary: 'Investigation KPIs',
      auth: 'user',
      roles: ANY_ROLE,
      query: z.object({ days: DaysInRange(30) }),
      response: z.object({
        total_investigations: Int,
        critical_count: Int,
        warning_count: Int,
        info_count: Int,
        total_tokens: Int,
        avg_confidence: z.number(),
        avg_duration_s: z.number(),
        total_cost_usd: z.number(),
        ...Stamp,
      }),
    },
    pendingTasks: {
      method: 'GET',
      path: '/api/investigations/pending-tasks',
      summary: 'Agent tasks pending or running',
      auth: 'user',
      roles: ANY_ROLE,
      response: z.object({ tasks: z.array(AgentTask).max(50), total: Int, ...Stamp }),
    },
    get: {
      method: 'GET',
      path: '/api/investigations/{investigation_id}',
      summary: 'One investigation with its full report',
      auth: 'user',
      roles: ANY_ROLE,
      params: z.object({ investigation_id: z.string().min(1).max(128) }),
      response: Investigation,
    },
  },
});
