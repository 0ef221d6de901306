// chat route group: the assistant (shared/chat/assistant.ts).
import { resetChat, chat } from '../shared/chat/assistant.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import { chatGroup } from '../shared/routes/chat.js';

export const handler = createGroupHandler(chatGroup, {
  message: async (req) => chat(req.principal, req.body.message),
  reset: async (req) => resetChat(req.principal),
});
