// A structured answer from the agentic loop: the tool loop, then the final text
// parsed as one JSON object that must fit a zod schema, with one repair round
// in which the model sees what did not validate. Used by the patrol and the agent.
import type * as z from '../zod.js';
import { DEFAULT_MAX_TOKENS, LoopStopped, NO_ANSWER, recordedCall, runToolLoop, textOf, type LoopResult } from './tool-loop.js';
import type { Message } from './types.js';
import { cutText } from '../text.js';

/** The answer did not validate, even after the repair round; the message says why. */
export class AnswerInvalid extends Error {}

/**
 * The JSON object in a model's answer: the whole text, the first ``` fence (```json or bare), or
 * the outermost braces. Found with indexOf, not a regular expression: a fence followed by
 * megabytes of whitespace (a runaway JSON mode) made one backtrack quadratically, for hours.
 */
export function jsonIn(text: string): unknown {
  const open = text.indexOf('```');
  const close = open < 0 ? -1 : text.indexOf('```', open + 3);
  const fenced = close < 0 ? undefined : text.slice(open + 3, close).replace(/^json/, '');
  for (const candidate of [text, fenced, text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)]) {
    if (!candidate?.trim()) continue;
    try {
      return JSON.parse(candidate);
    } catch {
      // next candidate
    }
  }
  return undefined;
}

/** How much of an answer without JSON its problem quotes: a refusal's sentence, or the start of the prose given instead. */
const QUOTED_CHARS = 160;

function problemsOf(schema: z.ZodMiniType, value: unknown, text: string): string | null {
  if (value === undefined) {
    // Quoted: a refusal ("I cannot help with that.") read as a broken answer, and the report said nothing of it.
    const said = text.replace(/\s+/g, ' ').trim();
    return said ? `the answer held no JSON object; it said: "${cutText(said, QUOTED_CHARS)}"` : 'the answer was empty';
  }
  const parsed = schema.safeParse(value);
  return parsed.success
    ? null
    : parsed.error.issues
        .slice(0, 8)
        .map((i) => `${i.path.join('.') || 'answer'}: ${i.message}`)
        .join('; ');
}

/**
 * The conversation with its last answer as text: a model that ended its turn with no text (or
 * only reasoning blocks) left an assistant message without content, which Bedrock refuses
 * (ValidationException), so the repair round would fail instead of being made.
 */
function withAnswer(messages: Message[]): Message[] {
  const last = messages.at(-1);
  if (last?.role !== 'assistant' || textOf(last)) return messages;
  return [...messages.slice(0, -1), { role: 'assistant', content: [{ type: 'text', text: NO_ANSWER }] }];
}

/**
 * Why an answer did not validate: an answer the output limit cut off is said to be that (its JSON is then
 * unfinished, and "no JSON object" would send the model to write the same too-long answer again).
 */
function problemOf(schema: z.ZodMiniType, text: string, cut: boolean): { value: unknown; problem: string | null } {
  const value = jsonIn(text);
  const problem = problemsOf(schema, value, text);
  // No figure: a reasoning model's limit also holds its hidden reasoning (shared/llm/openai.ts), so the cap sent may be larger.
  return { value, problem: problem && cut ? 'it was cut off at the output limit before it ended' : problem };
}

export async function structuredAnswer<S extends z.ZodMiniType>(
  schema: S,
  options: Parameters<typeof runToolLoop>[0],
): Promise<{ value: z.output<S>; loop: LoopResult }> {
  const loop = await runToolLoop(options);
  // The repair call has the loop's limit: a longer one would let the model repeat the answer that was cut.
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  let { value, problem } = problemOf(schema, loop.text, loop.cut);
  if (problem) {
    // A call made past the deadline could only time out: the answer stands as invalid.
    if (options.deadline !== undefined && Date.now() >= options.deadline)
      throw new AnswerInvalid(`the model's answer did not validate and no time was left for a repair round: ${problem}`);
    // The loop's stop signal holds for the repair call too.
    if (options.shouldStop?.()) throw new LoopStopped();
    const repair = await recordedCall(
      options.provider,
      {
        system: options.system,
        messages: [
          ...withAnswer(loop.messages),
          {
            role: 'user',
            content: [
              {
                type: 'text',
                text: loop.cut
                  ? `Your answer did not validate (${problem}). Answer again with only the JSON object, shorter, after brief reasoning: all of it well within ${maxTokens} tokens, the long texts cut down to what matters most.`
                  : `Your answer did not validate (${problem}). Answer again with only the corrected JSON object.`,
              },
            ],
          },
        ],
        tools: options.tools,
        max_tokens: maxTokens,
        // The caller's deadline holds for the repair too (the agent worker keeps a margin after it).
        deadline: options.deadline,
      },
      options.ledger,
      loop.spent,
    );
    ({ value, problem } = problemOf(schema, textOf(repair.message), repair.stop_reason === 'max_tokens'));
    if (problem) throw new AnswerInvalid(`the model's answer did not validate after one repair round: ${problem}`);
  }
  return { value: schema.parse(value) as z.output<S>, loop };
}
