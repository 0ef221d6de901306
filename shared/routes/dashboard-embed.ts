import * as z from 'zod';
import { ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';

export const GenerateTokensBody = z.strictObject({
  api_token: z.string().min(1).max(4096),
  navigation_token: z.string().min(1).max(4096),
});

export const dashboardEmbedGroup = defineGroup({
  name: 'dashboard-embed',
  tables: { users: 'read', 'embed-sessions': 'readwrite' },
  routes: {
    acquireSession: {
      method: 'POST', path: '/api/dashboard-embed/acquire-session', summary: 'Acquire a cookieless embed session',
      auth: 'user', roles: ANY_ROLE,
    },
    generateTokens: {
      method: 'PUT', path: '/api/dashboard-embed/generate-tokens', summary: 'Refresh embed API and navigation tokens',
      auth: 'user', roles: ANY_ROLE, body: GenerateTokensBody,
    },
  },
});
