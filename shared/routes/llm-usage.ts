import * as z from 'zod';
import { SUPERADMIN } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { DaysInRange } from './common.js';

const DaysQuery = z.object({ days: DaysInRange(30) });

export const llmUsageGroup = defineGroup({
  name: 'llm-usage',
  tables: { users: 'read', 'llm-usage': 'read' },
  routes: {
    summary: { method: 'GET', path: '/api/llm-usage/summary', summary: 'Daily LLM usage and totals', auth: 'user', roles: SUPERADMIN, query: DaysQuery },
    byModel: { method: 'GET', path: '/api/llm-usage/by-model', summary: 'LLM usage by model', auth: 'user', roles: SUPERADMIN, query: DaysQuery },
    pricing: { method: 'GET', path: '/api/llm-usage/pricing', summary: 'Model prices per million tokens', auth: 'user', roles: SUPERADMIN },
  },
});
