// The chat assistant (spec §4 Chat, §8 limits): the agentic loop
// (shared/llm/tool-loop.ts) over the configured LLM with the tools in
// ./tools.ts. Up to 12 rounds of tool calls, then a final answer that says it
// stopped. Every LLM call goes to the usage ledger (source `chat`, one run per message).
//
// Conversations live in this container's memory, per user, bounded; so does
// the rate limit. Behind API Gateway several containers may serve one user:
// the history then follows the container (a documented limitation).
import { randomUUID } from 'node:crypto';
import { BadGateway, ServiceUnavailable, TooManyRequests } from '../http/errors.js';
import type { Principal } from '../auth/principal.js';
import { describeLlmConfig, llmProvider } from '../llm/provider.js';
import { DATA_NOT_INSTRUCTIONS, nothingSpent, runToolLoop } from '../llm/tool-loop.js';
import { addChatSpend, claimChatTurn, releaseChatTurn } from '../db/llm-usage.js';
import { dayOf } from '../fleet/rollup.js';
import { llmSettings } from '../config/llm.js';
import { createLogger, errorFields } from '../log.js';
import { LlmError, type ContentBlock, type Message } from '../llm/types.js';
import { histories } from './conversations.js';
import { runTool, toolSpecs } from './tools.js';
import { CHAT_DEADLINE_MS } from '../routes/chat.js';

const log = createLogger('chat');

export const MAX_TOOL_ROUNDS = 12;
export const HISTORY_MESSAGES = 40;
/**
 * The history kept between messages, in characters (≈ 25,000 tokens): every call of the next
 * message sends it again, and a tool result is up to 12,000 characters with any number per turn,
 * so 40 messages could have been 3.6 M characters, past any model's context window.
 */
export const HISTORY_CHARS = 100_000;
/** Tool results of earlier turns longer than this keep only a stub; the answers that used them stay. */
export const STALE_RESULT_CHARS = 300;
export const MESSAGES_PER_MINUTE = 20;

const SYSTEM_PROMPT = [
  'You are the Fleet Health assistant for an operations team that runs hundreds of managed analytical database clusters for many customers.',
  "Answer from data: use the tools (SQL over the fleet snapshot, one cluster's details, its logs, the runbooks) rather than guessing, and say which figures you used.",
  'Scores run 0-100 (higher is healthier); classifications are Healthy, Warning, Critical; customer tiers S, A, B (S matters most).',
  'Reply in concise Markdown: lead with the answer, then the evidence (a short table when comparing clusters), then the next step from the runbooks when one applies.',
  DATA_NOT_INSTRUCTIONS,
].join('\n');

/**
 * The instructions of one person's messages: the team's, and who is asking, so "my issues" or "what is assigned
 * to me" finds theirs (an issue's `assignee` holds a username, as PATCH stores it). The username is all it names
 * of them, not their display name: it is the caller's own, of CanonicalUsername's characters (no spaces, no line
 * breaks), so it can steer no conversation but theirs.
 */
const systemPrompt = (asking: Pick<Principal, 'username' | 'role'>) =>
  [
    SYSTEM_PROMPT,
    `The person asking is the ${asking.role} whose username is ${asking.username}: issues assigned to them have that assignee, and "me" or "mine" means them.`,
  ].join('\n');

/**
 * Code as CommonMark reads it, left as written; whatever this takes for code must render as code, or an image in
 * it would show. A fenced block: a line of 3+ backquotes (its info holding none) or tildes, indented at most 3
 * spaces, to its closing fence or the end; its lines indented at least as the fence is (or blank), as a fence in a
 * list item ends where the item does. A code span: a run of backquotes to the next run of the same length, on its
 * line (three backquotes mid-line open no block; a span CommonMark would carry over lines just has its images made
 * links). A backquote after a backslash opens nothing (CommonMark's escape), so `` \`x ![i](u) ` `` is an image.
 */
const fence = (mark: '`' | '~', indent: string, run: string) =>
  `(?<=^|\\n)( {0,3})(${mark}{3,})${mark === '`' ? '[^`\\n]*' : '[^\\n]*'}(?=\\n|$)` +
  `(?:\\n(?! {0,3}${run}${mark}*[ \\t]*(?:\\n|$))(?:${indent}[^\\n]*|[ \\t]*(?=\\n|$)))*` +
  `(?:\\n {0,3}${run}${mark}*[ \\t]*(?=\\n|$))?`;
const IMAGE_MARK = /!+(?=\[)/g;
const CODE = new RegExp([fence('`', '\\1', '\\2'), fence('~', '\\3', '\\4'), '(?<![\\\\`])(`+)(?!`)[^\\n]*?(?<!`)\\5(?!`)'].join('|'), 'g');

/**
 * Markdown images load their URL when shown: a reply could leak data to any host. Outside code, every run of
 * `!` before a `[` goes, so each image, inline or by reference, is a plain link (`!![x](u)` too); code such as
 * `!['a'].includes(x)` keeps its meaning. In one pass: a pattern for the whole image rescanned the rest of the
 * reply at each `![` (a model's 80 KB of them took 4.6 s). The console drops images too (components/markdown.tsx).
 */
export async function withoutRemoteImages(markdown: string): Promise<string> {
  let out = '';
  let at = 0;
  let codeHasImageMark = false;
  for (const code of markdown.matchAll(CODE)) {
    out += markdown.slice(at, code.index).replace(IMAGE_MARK, '') + code[0];
    codeHasImageMark ||= code[0].includes('![');
    at = code.index + code[0].length;
  }
  out += markdown.slice(at).replace(IMAGE_MARK, '');
  if (!codeHasImageMark) return out;
  // What was kept as code holds a `![`: a Markdown parser judges whether any of it would show as an image after all
  // (CommonMark pairs backquotes over lines, and a list item's end closes its fence, which the pattern does not
  // follow). If so, every `![` goes, code's too. Loaded only then: most replies have no `![` in code.
  const { marked } = await import('marked');
  let image = false;
  marked.walkTokens(marked.lexer(out, { gfm: true }), (token) => {
    image ||= token.type === 'image';
  });
  return image ? markdown.replace(IMAGE_MARK, '') : out;
}

const STOP_NOTE = `_I stopped after ${MAX_TOOL_ROUNDS} rounds of tool calls (or when time ran short, or the tool results reached their limit); this answer uses what I had gathered by then._`;

/**
 * An answer the output limit ended mid-way (a reasoning model may spend it all reasoning), or the model's context
 * window (Bedrock says which): said, so it is not read as whole.
 */
const CUT_NOTE =
  '_This answer was cut off (at the output limit, or where the conversation filled the model’s context); ask for less at once, or start a new conversation._';

/**
 * The provider's content filter withheld the answer or ended it (Azure OpenAI's `content_filter`, a Bedrock
 * guardrail): said, where the reply read "_The model returned no text._" and the person could not tell why.
 */
const FILTER_NOTE =
  '_The model provider’s content filter withheld or cut this answer; rephrase the question, or ask an administrator about the provider’s filter settings._';

const recent = new Map<string, number[]>();

/**
 * At most MESSAGES_PER_MINUTE per user per minute (sliding window). A message the budget or another in flight then
 * turns away keeps its place: the limit is also what bounds the budget claim's write each one costs.
 */
function admit(user: string, now: number): void {
  const times = (recent.get(user) ?? []).filter((t) => now - t < 60_000);
  if (times.length >= MESSAGES_PER_MINUTE) {
    recent.set(user, times);
    throw new TooManyRequests(`At most ${MESSAGES_PER_MINUTE} chat messages a minute; try again shortly.`, (times[0]! + 60_000 - now) / 1000);
  }
  times.push(now);
  recent.set(user, times);
}

const startsTurn = (m: Message) => m.role === 'user' && m.content.every((b) => b.type === 'text');

/** A block's weight in the history: its text, a tool result, or a call's name and arguments. */
const blockChars = (b: ContentBlock) =>
  b.type === 'text' ? b.text.length : b.type === 'tool_result' ? b.content.length : b.name.length + JSON.stringify(b.input ?? {}).length;
const charsOf = (turn: Message[]) => turn.reduce((n, m) => n + m.content.reduce((k, b) => k + blockChars(b), 0), 0);

/** The turn with its long tool results cut to a stub; the calls stay, so each result still has its call. */
const stubbed = (turn: Message[]): Message[] =>
  turn.map((m) => ({
    ...m,
    content: m.content.map((b) =>
      b.type === 'tool_result' && b.content.length > STALE_RESULT_CHARS
        ? { ...b, content: `[${b.content.length} characters, not kept in the history: run the tool again if these figures are needed]` }
        : b,
    ),
  }));

/**
 * The history to keep: at most HISTORY_MESSAGES messages and HISTORY_CHARS characters, in whole
 * turns (a turn: the user's question, the tool calls and results, the answer), so a tool call
 * never loses its result or the other way round (providers refuse both). The last turn keeps its
 * tool results for follow-up questions, earlier ones keep stubs; over the budget, the last keeps
 * stubs too, then the oldest turns go, then a last turn still too large keeps its question and answer.
 */
function bounded(messages: Message[]): Message[] {
  const turns: Message[][] = [];
  for (const m of messages) {
    if (startsTurn(m)) turns.push([m]);
    else turns.at(-1)?.push(m); // before the first turn: nothing to attach to, dropped
  }
  const kept = turns.map((t, i) => (i < turns.length - 1 ? stubbed(t) : t));
  const overChars = () => kept.reduce((n, t) => n + charsOf(t), 0) > HISTORY_CHARS;
  const over = () => overChars() || kept.reduce((n, t) => n + t.length, 0) > HISTORY_MESSAGES;
  if (kept.length && overChars()) kept[kept.length - 1] = stubbed(kept.at(-1)!);
  while (kept.length > 1 && over()) kept.shift();
  const last = kept[0];
  if (last && over()) kept[0] = last.filter((_, i) => i === 0 || i === last.length - 1);
  if (over()) kept.length = 0; // a question of 8,000 characters and its answer never get here
  return kept.flat();
}

export interface ChatAnswer {
  reply: string;
  tool_calls: number;
  duration_ms: number;
}

/** The problem body's `limit` when a person's chat spend of the day is used up (the console says so, not "wait a minute"). */
export const DAILY_BUDGET_LIMIT = 'daily_budget';

/** The problem body's `limit` when another of the person's messages is being answered (one at a time while a budget is set). */
export const ONE_AT_A_TIME_LIMIT = 'one_at_a_time';
/** How long a message's claim holds if its container dies before releasing it: the loop's deadline and a margin. */
const TURN_CLAIM_MS = CHAT_DEADLINE_MS + 5_000;
/**
 * How long a message waits for the SQL snapshot's schema before its first model call: a 10,000-cluster
 * snapshot reads in 3-5 s, and what is left of the 27 s still holds tool rounds and the answer.
 */
export const SCHEMA_WAIT_MS = 8_000;

/**
 * Claims the person's turn under the daily budget (CHAT_DAILY_BUDGET_USD; 0: none, and no claim): a 429
 * until 00:00 UTC once their messages of the day cost it, or until their message being answered ends.
 * The claim is one conditional write (`claimChatTurn`): parallel messages cannot all pass the check and
 * all be spent. Returns the release, which counts what the message cost, or undefined without a budget.
 */
async function claimTurn(user: string, now: number): Promise<((costUsd: number) => Promise<void>) | undefined> {
  const budget = llmSettings().chatDailyBudgetUsd;
  if (budget <= 0) return undefined;
  const day = dayOf(now);
  const token = randomUUID();
  const refused = await claimChatTurn(user, day, budget, token, now, now + TURN_CLAIM_MS);
  if (refused?.reason === 'budget') {
    const midnight = Date.parse(`${day}T00:00:00Z`) + 86_400_000;
    throw new TooManyRequests(
      `Your chat messages today cost $${refused.spent.toFixed(2)}, the daily limit for each person on this service ($${budget}); you can chat again from 00:00 UTC.`,
      (midnight - now) / 1000,
      { limit: DAILY_BUDGET_LIMIT },
    );
  }
  if (refused)
    throw new TooManyRequests(
      'Another of your chat messages is still being answered (sent from another tab, or one whose answer did not reach this one): the assistant answers one message of each person at a time, so the daily budget counts each before the next starts. Send this one when that answer has come.',
      Math.max(1, (refused.until - now) / 1000),
      { limit: ONE_AT_A_TIME_LIMIT },
    );
  return (costUsd) => releaseChatTurn(user, day, token, costUsd);
}

export async function chat(principal: Principal, message: string, now = Date.now()): Promise<ChatAnswer> {
  const provider = llmProvider();
  if (!provider) throw new ServiceUnavailable(describeLlmConfig());
  admit(principal.userId, now);
  const release = await claimTurn(principal.username, now);
  // The history as this message found it; the turn is added to what is there when it ends (a reset, or a turn
  // answered meanwhile from another tab, is not overwritten).
  const before = histories.get(principal.userId) ?? [];
  const started = Date.now();
  // What this message's calls cost, failed ones too: counted against the day's budget however the loop ends.
  const spent = nothingSpent();
  let result: Awaited<ReturnType<typeof runToolLoop>>;
  try {
    result = await runToolLoop({
      spent,
      provider,
      system: systemPrompt(principal),
      messages: [...before, { role: 'user', content: [{ type: 'text', text: message }] }],
      tools: await toolSpecs(started + SCHEMA_WAIT_MS),
      runTool,
      maxRounds: MAX_TOOL_ROUNDS,
      ledger: { runId: randomUUID(), source: 'chat', user: principal.username },
      // The route has 29 s: tools stop in time for a final answer.
      deadline: started + CHAT_DEADLINE_MS,
    });
  } catch (error) {
    if (error instanceof LlmError) throw new BadGateway(`The language model failed: ${error.message}`);
    throw error;
  } finally {
    // Without a budget nothing was claimed, and the spend is still counted (the budget may be set later today).
    const count = release ?? ((cost: number) => (cost > 0 ? addChatSpend(principal.username, dayOf(now), cost) : Promise.resolve()));
    await count(spent.cost_usd).catch((error: unknown) =>
      log.error('chat spend not counted against the daily budget', { user: principal.username, cost_usd: spent.cost_usd, ...errorFields(error) }),
    );
  }
  const text = await withoutRemoteImages(result.text);
  // Why the answer ended early, first that applies: a note for each, and the reply's words when it has no text.
  const endings = [
    [result.stopped, STOP_NOTE, 'I could not reach an answer.'],
    [result.cut, CUT_NOTE, 'I used up my output limit before I could answer.'],
    [result.filtered, FILTER_NOTE, 'My answer was withheld.'],
  ] as const;
  const notes = endings.filter(([applies]) => applies).map(([, note]) => note);
  const said = text || (endings.find(([applies]) => applies)?.[2] ?? '');
  const reply = notes.length ? `${said}\n\n${notes.join('\n\n')}` : said || '_The model returned no text._';
  const turn = result.messages.slice(before.length);
  turn[turn.length - 1] = { role: 'assistant', content: [{ type: 'text', text: reply }] };
  histories.set(principal.userId, bounded([...(histories.get(principal.userId) ?? []), ...turn]));
  return { reply, tool_calls: result.tool_calls, duration_ms: Date.now() - started };
}
