import * as z from 'zod';
import { ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';

export const ChatMessageBody = z.strictObject({ message: z.string().trim().min(1).max(8000) });

export const chatGroup = defineGroup({
  name: 'chat',
  tables: {
    users: 'read',
    clusters: 'read',
    metrics: 'read',
    alerts: 'read',
    logs: 'read',
    scores: 'read',
    issues: 'read',
    rules: 'read',
    'llm-usage': 'readwrite',
  },
  grants: ['bedrock:invoke'],
  routes: {
    message: { method: 'POST', path: '/api/chat/message', summary: 'Ask the assistant', auth: 'user', roles: ANY_ROLE, body: ChatMessageBody },
    reset: { method: 'POST', path: '/api/chat/reset', summary: "Clear the caller's conversation", auth: 'user', roles: ANY_ROLE },
  },
});
