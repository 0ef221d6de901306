// chat route group.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { chatGroup } from '../shared/routes/chat.js';

const later = notImplemented('issue #8, chat assistant');

export const handler = createGroupHandler(chatGroup, {
  message: later,
  reset: later,
});
