// The configured LLM provider (DESIGN.md §10): Amazon Bedrock Converse or any
// OpenAI-compatible /v1/chat/completions endpoint, both behind the neutral
// LlmProvider of ./types.ts. Without one, callers fall back to the rules
// engine (patrol, investigations) or answer 503 with describeLlmConfig() (chat).
//
// Configuration: shared/config/llm.ts.
import type { Env } from '../config/env.js';
import { llmSettings } from '../config/llm.js';
import { bedrockProvider } from './bedrock.js';
import { openAiProvider } from './openai.js';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.js';
import type { LlmProvider } from './types.js';

export type { ChatRequest, ChatResponse, ContentBlock, LlmProvider, Message, StopReason, TokenUsage, ToolSpec } from './types.js';
export { LlmError } from './types.js';

export { describeLlmConfig } from './status.js';

/**
 * The configured provider, or null when LLM_PROVIDER is unset/blank. Throws
 * ServiceUnavailable (503) naming the variables to set when LLM_PROVIDER is
 * unknown or its settings are incomplete or invalid. Cheap: nothing is
 * loaded or fetched until the first converse(). `env`: another environment
 * than this process's (tests).
 */
export function llmProvider(env?: Env): LlmProvider | null {
  const { provider, retry } = env ? llmSettings.from(env) : llmSettings();
  if (!provider) return null;
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...retry };
  if (provider.kind === 'bedrock') {
    const { model, endpoint, region } = provider;
    return bedrockProvider({ model, ...(endpoint ? { endpoint } : {}), ...(region ? { region } : {}), retry: policy });
  }
  // The connection whole (model, base URL, reasoning effort; the key resolved per call, the secret cached per
  // container, so a missing secret fails the call, not the configuration check), with the retry policy.
  const { kind: _kind, ...connection } = provider;
  return openAiProvider({ ...connection, retry: policy });
}
