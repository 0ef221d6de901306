import * as z from 'zod';
import { ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { DaysInRange, Page, PageSize, Text } from './common.js';

export const InvestigationListQuery = z.object({
  days: DaysInRange(30),
  severity: z.enum(['', 'critical', 'warning', 'info']).default(''),
  customer: Text(200).default(''),
  page: Page,
  page_size: PageSize,
});

export const investigationsGroup = defineGroup({
  name: 'investigations',
  tables: { users: 'read', investigations: 'read' },
  routes: {
    list: { method: 'GET', path: '/api/investigations', summary: 'Agent investigations', auth: 'user', roles: ANY_ROLE, query: InvestigationListQuery },
    kpis: {
      method: 'GET', path: '/api/investigations/kpis', summary: 'Investigation KPIs', auth: 'user', roles: ANY_ROLE,
      query: z.object({ days: DaysInRange(30) }),
    },
    pendingTasks: { method: 'GET', path: '/api/investigations/pending-tasks', summary: 'Agent tasks pending or running', auth: 'user', roles: ANY_ROLE },
    get: {
      method: 'GET', path: '/api/investigations/{investigation_id}', summary: 'One investigation with its full report',
      auth: 'user', roles: ANY_ROLE, params: z.object({ investigation_id: z.string().min(1).max(128) }),
    },
  },
});
