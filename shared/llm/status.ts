// Whether the chat assistant can answer, from the LLM settings alone (shared/config/llm.ts): the chat
// group's GET /api/chat/status loads this and not the providers, which only a message needs.
import { llmSettings } from '../config/llm.js';
import { ServiceUnavailable } from '../http/errors.js';
import type { ChatStatus } from '../routes/chat.js';

/** The 503 detail for "no provider configured": what a chat user or operator should set. */
export function describeLlmConfig(): string {
  return 'No LLM provider is configured: set LLM_PROVIDER=bedrock (with LLM_MODEL) or LLM_PROVIDER=openai (with LLM_MODEL, LLM_BASE_URL and LLM_API_KEY).';
}

/**
 * Whether a chat message can be answered now (GET /api/chat/status): the configured model, or the 503 a
 * message would get (none configured, or a configuration that is incomplete or invalid) as its detail.
 */
export function llmStatus(): ChatStatus {
  try {
    const { provider } = llmSettings();
    return provider ? { available: true, model: provider.model, detail: null } : { available: false, model: null, detail: describeLlmConfig() };
  } catch (error) {
    if (error instanceof ServiceUnavailable) return { available: false, model: null, detail: error.message };
    throw error;
  }
}
