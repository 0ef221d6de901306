// Each user's conversation with the assistant, in this container's memory (see assistant.ts).
// A module of its own so that clearing one (`POST /api/chat/reset`) needs none of the
// assistant: the route group loads the assistant's chunk with the first message only.
import type { Principal } from '../auth/principal.js';
import type { Message } from '../llm/types.js';

/**
 * The bounded history of each user's conversation, by account id: a username can come back on another account
 * (an invitee's is their email: deleted, invited again), which must not inherit the old one's conversation.
 */
export const histories = new Map<string, Message[]>();

export function resetChat(principal: Principal): { status: 'ok'; message: string } {
  histories.delete(principal.userId);
  return { status: 'ok', message: 'Conversation cleared.' };
}
