// The chat assistant (spec §4 Chat, §8 limits): an agentic loop over the
// configured LLM with the tools in ./tools.ts. Up to 12 rounds of tool calls,
// then one last call for a final answer that says it stopped. Every LLM call
// goes to the usage ledger (source `chat`, one run per message).
//
// Conversations live in this container's memory, per user, bounded; so does
// the rate limit. Behind API Gateway several containers may serve one user:
// the history then follows the container (a documented limitation).
import { randomUUID } from 'node:crypto';
import { recordUsage } from '../db/llm-usage.js';
import { BadGateway, ServiceUnavailable, TooManyRequests } from '../http/errors.js';
import type { Principal } from '../http/route.js';
import { costOf, priceOf, pricingTable } from '../llm/pricing.js';
import { describeLlmConfig, llmProvider } from '../llm/provider.js';
import { LlmError, type ChatResponse, type ContentBlock, type LlmProvider, type Message } from '../llm/types.js';
import { createLogger } from '../log.js';
import { runTool, toolSpecs } from './tools.js';

export const MAX_TOOL_ROUNDS = 12;
export const HISTORY_MESSAGES = 40;
export const MESSAGES_PER_MINUTE = 20;
const log = createLogger('chat');

const SYSTEM_PROMPT = [
  'You are the Fleet Health assistant for an operations team that runs hundreds of managed analytical database clusters for many customers.',
  'Answer from data: use the tools (SQL over the fleet snapshot, one cluster\'s details, its logs, the runbooks) rather than guessing, and say which figures you used.',
  'Scores run 0-100 (higher is healthier); classifications are Healthy, Warning, Critical; customer tiers S, A, B (S matters most).',
  'Reply in concise Markdown: lead with the answer, then the evidence (a short table when comparing clusters), then the next step from the runbooks when one applies.',
].join('\n');

const LAST_ROUND = 'You have used every tool round. Answer now with what you have; do not call tools.';
const STOP_NOTE = `_I stopped after ${MAX_TOOL_ROUNDS} rounds of tool calls; this answer uses what I had gathered by then._`;

const histories = new Map<string, Message[]>();
const recent = new Map<string, number[]>();

/** At most MESSAGES_PER_MINUTE per user per minute (sliding window). */
function admit(user: string, now: number): void {
  const times = (recent.get(user) ?? []).filter((t) => now - t < 60_000);
  if (times.length >= MESSAGES_PER_MINUTE) {
    recent.set(user, times);
    throw new TooManyRequests(`At most ${MESSAGES_PER_MINUTE} chat messages a minute; try again shortly.`, (times[0]! + 60_000 - now) / 1000);
  }
  times.push(now);
  recent.set(user, times);
}

/** The last messages, cut where a conversation turn begins (never between a tool call and its result). */
function bounded(messages: Message[]): Message[] {
  let kept = messages.slice(-HISTORY_MESSAGES);
  const startsTurn = (m: Message) => m.role === 'user' && m.content.every((b) => b.type === 'text');
  while (kept.length && !startsTurn(kept[0]!)) kept = kept.slice(1);
  return kept;
}

const textOf = (message: Message) =>
  message.content
    .filter((b): b is Extract<ContentBlock, { type: 'text' }> => b.type === 'text')
    .map((b) => b.text)
    .join('\n')
    .trim();

export interface ChatAnswer {
  reply: string;
  tool_calls: number;
  duration_ms: number;
}

export async function chat(principal: Principal, message: string, now = Date.now()): Promise<ChatAnswer> {
  const provider = llmProvider();
  if (!provider) throw new ServiceUnavailable(describeLlmConfig());
  admit(principal.username, now);
  const started = Date.now();
  const runId = randomUUID();
  const tools = await toolSpecs();
  const messages: Message[] = [...(histories.get(principal.username) ?? []), { role: 'user', content: [{ type: 'text', text: message }] }];
  let toolCalls = 0;
  let reply = '';

  for (let round = 0; ; round++) {
    const last = round === MAX_TOOL_ROUNDS;
    const response = await call(provider, { system: SYSTEM_PROMPT, messages, tools, max_tokens: 2048 }, runId, principal.username);
    messages.push(response.message);
    const uses = response.message.content.filter((b): b is Extract<ContentBlock, { type: 'tool_use' }> => b.type === 'tool_use');
    if (uses.length === 0 || last) {
      const text = textOf(response.message);
      reply = last ? `${text || 'I could not reach an answer.'}\n\n${STOP_NOTE}` : text || '_The model returned no text._';
      // Unanswered tool calls must not stay in the history: the turn ends with the reply as text.
      if (uses.length) messages[messages.length - 1] = { role: 'assistant', content: [{ type: 'text', text: reply }] };
      break;
    }
    const results: ContentBlock[] = [];
    for (const use of uses) {
      toolCalls++;
      const result = use.input_error
        ? { content: `Your arguments for ${use.name} were not valid: ${use.input_error}. Send a JSON object that fits the tool's schema.`, is_error: true }
        : await runTool(use.name, use.input);
      results.push({ type: 'tool_result', tool_use_id: use.id, content: result.content, is_error: result.is_error });
    }
    // Roles must alternate (Bedrock refuses two user messages in a row): the last-round notice rides with the results.
    if (round + 1 === MAX_TOOL_ROUNDS) results.push({ type: 'text', text: LAST_ROUND });
    messages.push({ role: 'user', content: results });
  }

  const history = bounded(messages.map((m) => ({ ...m, content: m.content.filter((b) => !(b.type === 'text' && b.text === LAST_ROUND)) })));
  histories.set(principal.username, history);
  return { reply, tool_calls: toolCalls, duration_ms: Date.now() - started };
}

/** One LLM call, recorded in the ledger whether it succeeds or not. */
async function call(provider: LlmProvider, request: Parameters<LlmProvider['converse']>[0], runId: string, user: string): Promise<ChatResponse> {
  const started = Date.now();
  try {
    const response = await provider.converse(request);
    const { input_tokens, output_tokens, total_tokens } = response.usage;
    await recordUsage({
      run_id: runId, source: 'chat', model: response.model, input_tokens, output_tokens, total_tokens,
      cost_usd: costOf(priceOf(await pricingTable(), response.model), input_tokens, output_tokens), duration_ms: response.latency_ms, error: false, user,
    });
    return response;
  } catch (error) {
    await recordUsage({
      run_id: runId, source: 'chat', model: provider.model, input_tokens: 0, output_tokens: 0, total_tokens: 0, cost_usd: 0,
      duration_ms: Date.now() - started, error: true, user,
    }).catch((e: unknown) => log.error('usage not recorded', { error: String(e) }));
    if (error instanceof LlmError) throw new BadGateway(`The language model failed: ${error.message}`);
    throw error;
  }
}

export function resetChat(principal: Principal): { status: 'ok'; message: string } {
  histories.delete(principal.username);
  return { status: 'ok', message: 'Conversation cleared.' };
}
