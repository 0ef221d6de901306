// The repair round of a structured answer (shared/llm/structured.ts) over Bedrock, against the
// local Converse server (test/support/fake-bedrock.ts), which refuses an assistant message with
// no content as Bedrock does (400 ValidationException): a model that ended its turn with no
// text, or with reasoning only, still gets its repair round; an answer the output limit cut
// off is told so, and asked for a shorter one.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { llmProvider } from '../../shared/llm/provider.js';
import { structuredAnswer } from '../../shared/llm/structured.js';
import * as z from '../../shared/zod.js';
import { useTestTables } from '../support/dynamo.js';
import { startFakeBedrock, type BedrockReply, type FakeBedrock } from '../support/fake-bedrock.js';

let fake: FakeBedrock;
beforeAll(async () => {
  await useTestTables();
  fake = await startFakeBedrock();
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  // The SDK's default credential chain reads these from process.env.
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDFLEETHEALTHTEST1');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'bedrock-secret-access-key');
  vi.stubEnv('AWS_SESSION_TOKEN', '');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

const Answer = z.object({ ok: z.boolean() });

/** A Converse answer whose only block is reasoning (no neutral form: the provider leaves it out). */
const reasoningOnly: BedrockReply = {
  kind: 'raw',
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    output: { message: { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'Thinking it over.', signature: 'sig' } } }] } },
    stopReason: 'end_turn',
    usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 },
    metrics: { latencyMs: 42 },
  }),
};

describe('the repair round of a structured answer over Bedrock', () => {
  it.each([
    ['with no text', { kind: 'text', text: '' } as BedrockReply],
    ['with reasoning only', reasoningOnly],
  ])('is made when the model ended its turn %s', async (_, empty) => {
    fake.enqueue(empty).enqueueText('{"ok":true}');
    const { value } = await ask('repair-empty');
    expect(value).toEqual({ ok: true });
    expect(fake.received.map((r) => r.rejected)).toEqual([undefined, undefined]);
    // The repair call carries the empty turn as a placeholder, then the request to correct it.
    const repair = fake.received[1]!.body.messages;
    expect(repair.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(repair[1]!.content).toEqual([{ text: '(no answer)' }]);
    expect(repair[2]!.content[0]!.text).toMatch(/did not validate \(the answer was empty\)/);
  });

  it('says an answer the output limit cut off was cut, and asks for a shorter one, not for "a JSON object"', async () => {
    fake.enqueueText('{"ok":tr', { stopReason: 'max_tokens' }).enqueueText('{"ok":true}');
    const { value } = await ask('repair-cut', 300);
    expect(value).toEqual({ ok: true });
    const [first, repair] = fake.received.map((r) => r.body);
    expect(first!.inferenceConfig).toMatchObject({ maxTokens: 300 });
    expect(repair!.inferenceConfig).toMatchObject({ maxTokens: 300 });
    expect(repair!.messages.at(-1)!.content[0]!.text).toBe(
      'Your answer did not validate (it was cut off at the output limit before it ended). Answer again with only the JSON object, shorter, after brief reasoning: all of it well within 300 tokens, the long texts cut down to what matters most.',
    );
  });

  it('quotes an answer that held no JSON (a refusal), so the report says what the model said', async () => {
    fake.enqueueText('I cannot help with that.').enqueueText(`I  cannot\nhelp with that, ${'really '.repeat(40)}`);
    const answered = ask('repair-refused');
    await expect(answered).rejects.toThrow(
      /did not validate after one repair round: the answer held no JSON object; it said: "I cannot help with that, really (really )+r…"$/,
    );
    expect(fake.received[1]!.body.messages.at(-1)!.content[0]!.text).toBe(
      'Your answer did not validate (the answer held no JSON object; it said: "I cannot help with that."). Answer again with only the corrected JSON object.',
    );
  });

  it('when the repair is cut off too, fails saying so', async () => {
    fake.enqueueText('{"ok":tr', { stopReason: 'max_tokens' }).enqueueText('{"o', { stopReason: 'max_tokens' });
    const answered = ask('repair-cut-twice');
    await expect(answered).rejects.toThrow("the model's answer did not validate after one repair round: it was cut off at the output limit before it ended");
  });
});

/** "Is the fleet fine?" through the Bedrock provider at the fake, no tools: a structured answer, recorded under `runId`. */
function ask(runId: string, maxTokens?: number) {
  const provider = llmProvider({
    LLM_PROVIDER: 'bedrock',
    LLM_MODEL: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: fake.endpoint,
    LLM_MAX_ATTEMPTS: '1',
  })!;
  return structuredAnswer(Answer, {
    provider,
    system: 's',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Is the fleet fine?' }] }],
    tools: [],
    runTool: async () => ({ content: 'ok', is_error: false }),
    maxRounds: 2,
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ledger: { runId, source: 'agent', user: 'test' },
  });
}
