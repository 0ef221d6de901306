import * as z from 'zod';
import { ADMIN_UP, ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { DaysInRange, Page, PageSize } from './common.js';

export const PatrolTriggerBody = z
  .strictObject({ report_type: z.enum(['on_demand', 'scheduled']).default('on_demand') })
  .default({ report_type: 'on_demand' });

export const patrolGroup = defineGroup({
  name: 'patrol',
  tables: { users: 'read', patrol: 'readwrite', locks: 'readwrite', audit: 'readwrite' },
  grants: ['invoke:patrol-worker'],
  routes: {
    list: {
      method: 'GET', path: '/api/patrol', summary: 'Patrol reports', auth: 'user', roles: ANY_ROLE,
      query: z.object({ days: DaysInRange(90), page: Page, page_size: PageSize }),
    },
    latest: { method: 'GET', path: '/api/patrol/latest', summary: 'Most recent report with parsed fields', auth: 'user', roles: ANY_ROLE },
    kpis: { method: 'GET', path: '/api/patrol/kpis/summary', summary: 'Patrol KPIs over 30 days', auth: 'user', roles: ANY_ROLE },
    get: {
      method: 'GET', path: '/api/patrol/{report_id}', summary: 'One patrol report', auth: 'user', roles: ANY_ROLE,
      params: z.object({ report_id: z.string().min(1).max(128) }),
    },
    trigger: { method: 'POST', path: '/api/patrol/trigger', summary: 'Run a patrol scan (one at a time)', auth: 'user', roles: ADMIN_UP, body: PatrolTriggerBody },
  },
});
