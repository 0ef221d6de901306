// The configured LLM provider (DESIGN.md §10): Amazon Bedrock Converse or any
// OpenAI-compatible /v1/chat/completions endpoint, both behind the neutral
// LlmProvider of ./types.ts. Without one, callers fall back to the rules
// engine (patrol, investigations) or answer 503 with describeLlmConfig() (chat).
//
// Configuration (environment):
//   LLM_PROVIDER        'bedrock' | 'openai'; unset or empty: no LLM provider.
//   LLM_MODEL           model id, e.g. anthropic.claude-3-5-sonnet-20240620-v1:0 (bedrock) or gpt-4o-mini (openai)
//   LLM_TIMEOUT_MS      optional, default 60000: how long one attempt may take
//   LLM_MAX_ATTEMPTS    optional, default 4 (1 to 10): attempts per call, retries included
//   LLM_RETRY_BASE_MS   optional, default 500: first backoff step, doubling per retry
// Bedrock (LLM_PROVIDER=bedrock): the SDK's default region and credentials
//   (the Lambda's role on AWS). AWS_ENDPOINT_URL_BEDROCK_RUNTIME, the SDK's
//   standard override, points it elsewhere (tests use a local fake).
// OpenAI-compatible (LLM_PROVIDER=openai):
//   LLM_BASE_URL        e.g. https://api.openai.com or http://localhost:11434 (with or without /v1)
//   LLM_API_KEY         sent as `Authorization: Bearer …`; on AWS, LLM_API_KEY_ARN names a
//                       Secrets Manager secret instead. Optional for a server on localhost.
//
// URLs must be https (plain http only to a loopback host): the key travels in a header.
import { secret } from '../auth/secrets.js';
import { ServiceUnavailable } from '../http/errors.js';
import { isLoopback, serviceUrl } from '../http/service-url.js';
import { bedrockProvider } from './bedrock.js';
import { openAiProvider } from './openai.js';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.js';
import type { LlmProvider } from './types.js';

export type { ChatRequest, ChatResponse, ContentBlock, LlmProvider, Message, StopReason, TokenUsage, ToolSpec } from './types.js';
export { LlmError } from './types.js';

/** The 503 detail for "no provider configured": what a chat user or operator should set. */
export function describeLlmConfig(): string {
  return 'No LLM provider is configured: set LLM_PROVIDER=bedrock (with LLM_MODEL) or LLM_PROVIDER=openai (with LLM_MODEL, LLM_BASE_URL and LLM_API_KEY).';
}

/**
 * The configured provider, or null when LLM_PROVIDER is unset/blank. Throws
 * ServiceUnavailable (503) naming the variables to set when LLM_PROVIDER is
 * unknown or its settings are incomplete or invalid. Cheap: nothing is
 * loaded or fetched until the first converse().
 */
export function llmProvider(env: NodeJS.ProcessEnv = process.env): LlmProvider | null {
  const kind = text(env, 'LLM_PROVIDER');
  if (!kind) return null;
  switch (kind.toLowerCase()) {
    case 'bedrock':
      return bedrockFromEnv(env);
    case 'openai':
      return openAiFromEnv(env);
    default:
      throw new ServiceUnavailable(`LLM_PROVIDER '${kind.slice(0, 40)}' is unknown: set it to 'bedrock' or 'openai', or leave it unset.`);
  }
}

function bedrockFromEnv(env: NodeJS.ProcessEnv): LlmProvider {
  failIfMissing('bedrock', text(env, 'LLM_MODEL') ? [] : ['LLM_MODEL']);
  const endpoint = text(env, 'AWS_ENDPOINT_URL_BEDROCK_RUNTIME');
  const region = text(env, 'AWS_REGION') || text(env, 'AWS_DEFAULT_REGION');
  return bedrockProvider({
    model: text(env, 'LLM_MODEL'),
    // The SDK reads both from process.env itself; passing them honours an injected env too.
    ...(endpoint ? { endpoint: serviceUrl(endpoint, 'AWS_ENDPOINT_URL_BEDROCK_RUNTIME').href.replace(/\/+$/, '') } : {}),
    ...(region ? { region } : {}),
    retry: retryPolicy(env),
  });
}

function openAiFromEnv(env: NodeJS.ProcessEnv): LlmProvider {
  const missing = ['LLM_MODEL', 'LLM_BASE_URL'].filter((name) => !text(env, name));
  const url = text(env, 'LLM_BASE_URL') ? serviceUrl(text(env, 'LLM_BASE_URL'), 'LLM_BASE_URL') : undefined;
  // A local server (Ollama, vLLM, llama.cpp) usually needs no key; anything remote does.
  const keyRequired = !url || !isLoopback(url);
  if (keyRequired && !text(env, 'LLM_API_KEY') && !text(env, 'LLM_API_KEY_ARN')) missing.push('LLM_API_KEY (or LLM_API_KEY_ARN)');
  failIfMissing('openai', missing);
  return openAiProvider({
    model: text(env, 'LLM_MODEL'),
    // Accept ".../v1" and "...": the provider appends /v1/chat/completions.
    baseUrl: `${url!.origin}${url!.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}`,
    apiKey: async () => {
      const direct = text(env, 'LLM_API_KEY');
      if (direct) return direct;
      if (!text(env, 'LLM_API_KEY_ARN')) return undefined;
      // secret() reads process.env and caches per container; fetched per call, so a
      // missing secret fails the call, not the configuration check.
      const fetched = (await secret('LLM_API_KEY'))?.trim();
      if (!fetched) throw new ServiceUnavailable('LLM_API_KEY is empty: check the secret LLM_API_KEY_ARN names.');
      return fetched;
    },
    retry: retryPolicy(env),
  });
}

function text(env: NodeJS.ProcessEnv, name: string): string {
  return env[name]?.trim() ?? '';
}

function failIfMissing(provider: string, missing: string[]): void {
  if (missing.length === 0) return;
  throw new ServiceUnavailable(`LLM_PROVIDER is '${provider}' but its configuration is incomplete: set ${missing.join(', ')}.`);
}

function retryPolicy(env: NodeJS.ProcessEnv): RetryPolicy {
  return {
    ...DEFAULT_RETRY,
    timeoutMs: whole(env, 'LLM_TIMEOUT_MS', DEFAULT_RETRY.timeoutMs, 1, 15 * 60_000, 'a positive whole number of milliseconds (at most 900000)'),
    maxAttempts: whole(env, 'LLM_MAX_ATTEMPTS', DEFAULT_RETRY.maxAttempts, 1, 10, 'a whole number from 1 to 10'),
    baseDelayMs: whole(env, 'LLM_RETRY_BASE_MS', DEFAULT_RETRY.baseDelayMs, 0, 60_000, 'a whole number of milliseconds from 0 to 60000'),
  };
}

function whole(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, expected: string): number {
  const raw = text(env, name);
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new ServiceUnavailable(`${name} must be ${expected}.`);
  return value;
}
