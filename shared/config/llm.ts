// The LLM provider (shared/llm/): Amazon Bedrock Converse or any
// OpenAI-compatible /v1/chat/completions server. Optional: unset, chat answers
// 503 and the patrol and agents run the rules engine; set but incomplete or
// invalid, callers get a 503 naming what to set (never echoing a value).
//
//   LLM_PROVIDER        'bedrock' | 'openai'; unset or empty: no LLM provider.
//   LLM_MODEL           model id, e.g. anthropic.claude-3-5-sonnet-20240620-v1:0 (bedrock) or gpt-4o-mini (openai)
//   LLM_TIMEOUT_MS      optional, default 60000: how long one attempt may take
//   LLM_MAX_ATTEMPTS    optional, default 4 (1 to 10): attempts per call, retries included
//   LLM_RETRY_BASE_MS   optional, default 500: first backoff step, doubling per retry
//   CHAT_DAILY_BUDGET_USD optional, default 20 (0: none): what one person's chat messages may cost per UTC day
//   LLM_REASONING_EFFORT optional: low | medium | high, sent as `reasoning_effort` to an OpenAI reasoning model on
//                       OpenAI's API (shared/llm/openai.ts); unset, the model's own default. The three every reasoning
//                       model there takes: gpt-5's `minimal` is refused by the o-series and gpt-5.1, whose `none` gpt-5 refuses.
// Bedrock: the SDK's default region and credentials (the Lambda's role on AWS);
//   AWS_ENDPOINT_URL_BEDROCK_RUNTIME, the SDK's standard override, points it elsewhere (tests).
// OpenAI-compatible:
//   LLM_BASE_URL        e.g. https://api.openai.com or http://localhost:11434 (with or without /v1); Azure OpenAI's
//                       v1 API: https://<resource>.openai.azure.com/openai (LLM_MODEL: the deployment's name)
//   LLM_API_KEY         bearer key (secret); on AWS LLM_API_KEY_ARN names a Secrets Manager secret. Optional for a loopback server.
// URLs must be https (plain http only to a loopback host): the key travels in a header.
import { ServiceUnavailable } from '../http/errors.js';
import { isLoopback, serviceUrl } from '../http/service-url.js';
import * as z from '../zod.js';
import { defineSettings, text, usdBudget, whole } from './env.js';
import { credential, secretVariables } from './secrets.js';

const DEFAULT_TIMEOUT_MS = 60_000;
/**
 * A person's chat spend a day: chat is open to every role, and a message makes up to 13 model calls, each
 * resending the history and tool results; per-container rate limits alone leave the spend unbounded.
 */
const DEFAULT_CHAT_BUDGET_USD = 20;

export const REASONING_EFFORTS = ['low', 'medium', 'high'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];
const EFFORT_MESSAGE = `LLM_REASONING_EFFORT must be one of ${REASONING_EFFORTS.join(', ')}, or unset.`;

export const llmSettings = defineSettings(
  'llm',
  () => ({
    LLM_PROVIDER: text(),
    LLM_MODEL: text(),
    LLM_BASE_URL: text(),
    ...secretVariables('LLM_API_KEY'),
    LLM_TIMEOUT_MS: whole(
      'LLM_TIMEOUT_MS',
      DEFAULT_TIMEOUT_MS,
      1,
      15 * 60_000,
      '',
      'LLM_TIMEOUT_MS must be a positive whole number of milliseconds (at most 900000).',
    ),
    LLM_MAX_ATTEMPTS: whole('LLM_MAX_ATTEMPTS', 4, 1, 10),
    LLM_RETRY_BASE_MS: whole('LLM_RETRY_BASE_MS', 500, 0, 60_000, ' of milliseconds'),
    CHAT_DAILY_BUDGET_USD: usdBudget('CHAT_DAILY_BUDGET_USD', DEFAULT_CHAT_BUDGET_USD),
    LLM_REASONING_EFFORT: z.optional(z.enum(REASONING_EFFORTS, { error: EFFORT_MESSAGE })),
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: text(),
    AWS_REGION: text(),
    AWS_DEFAULT_REGION: text(),
  }),
  {
    secrets: ['LLM_API_KEY'],
    failure: (message) => new ServiceUnavailable(message),
    derive: (v) => {
      const retry = { timeoutMs: v.LLM_TIMEOUT_MS, maxAttempts: v.LLM_MAX_ATTEMPTS, baseDelayMs: v.LLM_RETRY_BASE_MS };
      return { provider: provider(v), retry, chatDailyBudgetUsd: v.CHAT_DAILY_BUDGET_USD };
    },
  },
);

export type LlmConnection =
  | { kind: 'bedrock'; model: string; endpoint?: string; region?: string }
  | { kind: 'openai'; model: string; baseUrl: string; apiKey: () => Promise<string | undefined>; reasoningEffort?: ReasoningEffort };

function provider(v: {
  LLM_PROVIDER?: string;
  LLM_MODEL?: string;
  LLM_BASE_URL?: string;
  LLM_API_KEY?: string;
  LLM_API_KEY_ARN?: string;
  LLM_REASONING_EFFORT?: ReasoningEffort;
  AWS_ENDPOINT_URL_BEDROCK_RUNTIME?: string;
  AWS_REGION?: string;
  AWS_DEFAULT_REGION?: string;
}): LlmConnection | null {
  if (!v.LLM_PROVIDER) return null;
  const incomplete = (kind: string, missing: string[]) => {
    if (missing.length) throw new ServiceUnavailable(`LLM_PROVIDER is '${kind}' but its configuration is incomplete: set ${missing.join(', ')}.`);
  };
  switch (v.LLM_PROVIDER.toLowerCase()) {
    case 'bedrock': {
      incomplete('bedrock', v.LLM_MODEL ? [] : ['LLM_MODEL']);
      const endpoint = v.AWS_ENDPOINT_URL_BEDROCK_RUNTIME;
      const region = v.AWS_REGION || v.AWS_DEFAULT_REGION;
      return {
        kind: 'bedrock',
        model: v.LLM_MODEL!,
        // The SDK reads both from process.env itself; passing them honours another environment (tests) too.
        ...(endpoint ? { endpoint: serviceUrl(endpoint, 'AWS_ENDPOINT_URL_BEDROCK_RUNTIME').href.replace(/\/+$/, '') } : {}),
        ...(region ? { region } : {}),
      };
    }
    case 'openai': {
      const missing: string[] = (['LLM_MODEL', 'LLM_BASE_URL'] as const).filter((name) => !v[name]);
      const url = v.LLM_BASE_URL ? serviceUrl(v.LLM_BASE_URL, 'LLM_BASE_URL') : undefined;
      const key = credential('LLM_API_KEY', v);
      // A local server (Ollama, vLLM, llama.cpp) usually needs no key; anything remote does.
      if ((!url || !isLoopback(url)) && !key.configured) missing.push('LLM_API_KEY (or LLM_API_KEY_ARN)');
      incomplete('openai', missing);
      return {
        kind: 'openai',
        model: v.LLM_MODEL!,
        // Accept ".../v1" and "...": the provider appends /v1/chat/completions.
        baseUrl: `${url!.origin}${url!.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}`,
        apiKey: key.value,
        ...(v.LLM_REASONING_EFFORT ? { reasoningEffort: v.LLM_REASONING_EFFORT } : {}),
      };
    }
    default:
      throw new ServiceUnavailable(`LLM_PROVIDER '${v.LLM_PROVIDER.slice(0, 40)}' is unknown: set it to 'bedrock' or 'openai', or leave it unset.`);
  }
}
