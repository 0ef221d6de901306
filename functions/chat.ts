// chat route group: the assistant (shared/chat/assistant.ts).
import { createGroupHandler } from '../shared/http/group-handler.js';
import { resetChat } from '../shared/chat/conversations.js';
import { llmStatus } from '../shared/llm/status.js';
import { chatGroup } from '../shared/routes/chat.js';

// The assistant with its tools (the SQL snapshot, the fleet view and scoring it reads, the log and
// issue readers) is a chunk the first message loads, as settings' YAML checker loads with the
// first rule write (infra/README.md, code splitting): a message then waits seconds on the model,
// and the container's start does not compile what only a message runs. A reset only forgets the
// conversation, which lives outside the chunk.
const assistant = () => import('../shared/chat/assistant.js');

export const handler = createGroupHandler(chatGroup, {
  message: async (req) => (await assistant()).chat(req.principal, req.body.message),
  reset: async (req) => resetChat(req.principal),
  status: async () => llmStatus(),
});
