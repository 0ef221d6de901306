// A tool name the model made up, in a form the provider refuses ('functions.run_sql',
// 'run_sql<|channel|>commentary'): the call is answered "there is no tool", and the
// conversation sent back on the next call names it with a placeholder the provider
// accepts. Each fake checks names as the real service does (Bedrock: [a-zA-Z0-9_-]+,
// at most 64; OpenAI likewise) and refuses with its 400 otherwise.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { chat } from '../../shared/chat/assistant.js';
import { resetChat } from '../../shared/chat/conversations.js';
import { useTestTables } from '../support/dynamo.js';
import { startFakeBedrock, type BedrockReply, type FakeBedrock } from '../support/fake-bedrock.js';
import { startFakeOpenAi, type FakeOpenAi, type OpenAiReply } from '../support/fake-openai.js';

const VALID_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const BAD_NAMES = ['functions.run_sql', 'run_sql<|channel|>commentary', 'x'.repeat(65)];

let openai: FakeOpenAi;
let bedrock: FakeBedrock;
beforeAll(async () => {
  await useTestTables();
  openai = await startFakeOpenAi();
  bedrock = await startFakeBedrock();
});
afterAll(async () => {
  await openai?.close();
  await bedrock?.close();
});
beforeEach(() => {
  openai.reset();
  bedrock.reset();
});
afterEach(() => {
  vi.unstubAllEnvs();
});

const user = (username: string) => ({ username, role: 'viewer' }) as unknown as Principal;

/**
 * The model makes the bad calls, then two replies that are refused if a request carries a bad name
 * (`checked`); two messages of one user's chat: the first answered after the bad calls, the second
 * the next call, which sends them again. The three requests the fake answered.
 */
async function converse<Reply, Request>(
  fake: { enqueueToolUse(calls: { name: string; input: unknown }[]): void; enqueue(reply: Reply): void; answered(): Request[] },
  checked: (then: { kind: 'text'; text: string }) => Reply,
  name: string,
): Promise<Request[]> {
  fake.enqueueToolUse(BAD_NAMES.map((bad) => ({ name: bad, input: { sql: 'SELECT 1' } })));
  fake.enqueue(checked({ kind: 'text', text: 'sorry, wrong tool' }));
  fake.enqueue(checked({ kind: 'text', text: 'second answer' }));
  const u = user(name);
  try {
    expect((await chat(u, 'which clusters are at risk?')).reply).toBe('sorry, wrong tool');
    expect((await chat(u, 'and now?')).reply).toBe('second answer');
  } finally {
    resetChat(u);
  }
  const answered = fake.answered();
  expect(answered).toHaveLength(3);
  return answered;
}

/** The tool results of the bad calls, in order: each says there is no such tool. */
function expectNoSuchTool(results: (string | null | undefined)[]) {
  expect(results).toHaveLength(BAD_NAMES.length);
  for (const [i, name] of BAD_NAMES.entries()) expect(results[i]).toContain(`There is no tool "${name}"`);
}

describe('a tool name the provider would refuse', () => {
  it('OpenAI: is answered "no such tool" and echoed as a placeholder, so the next call is accepted', async () => {
    vi.stubEnv('LLM_PROVIDER', 'openai');
    vi.stubEnv('LLM_MODEL', 'gpt-4o-mini');
    vi.stubEnv('LLM_BASE_URL', openai.baseUrl);
    const checked =
      (then: OpenAiReply): OpenAiReply =>
      (request) => {
        const names = request.body.messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.name);
        const bad = names.find((n) => !VALID_NAME.test(n));
        return bad === undefined
          ? then
          : { kind: 'error', status: 400, message: `Invalid 'messages': function name '${bad}' does not match '^[a-zA-Z0-9_-]+$'.` };
      };
    const answered = await converse(openai, checked, 'bad-tool-openai');
    expectNoSuchTool(answered[1]!.body.messages.filter((m) => m.role === 'tool').map((m) => m.content));
  });

  it('Bedrock: is answered "no such tool" and echoed as a placeholder, so the next call is accepted', async () => {
    vi.stubEnv('LLM_PROVIDER', 'bedrock');
    vi.stubEnv('LLM_MODEL', 'anthropic.claude-3-5-sonnet-20240620-v1:0');
    vi.stubEnv('AWS_REGION', 'us-east-1');
    vi.stubEnv('AWS_ENDPOINT_URL_BEDROCK_RUNTIME', bedrock.endpoint);
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDFLEETHEALTHTEST1');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'bedrock-secret-access-key-test');
    vi.stubEnv('AWS_SESSION_TOKEN', '');
    const checked =
      (then: BedrockReply): BedrockReply =>
      (request) => {
        const names = request.body.messages.flatMap((m) => m.content).flatMap((b) => (b.toolUse ? [b.toolUse.name] : []));
        const bad = names.find((n) => !VALID_NAME.test(n));
        return bad === undefined
          ? then
          : {
              kind: 'error',
              type: 'ValidationException',
              message: `Value '${bad}' at 'messages.1.member.content.1.member.toolUse.name' failed to satisfy constraint`,
            };
      };
    const answered = await converse(bedrock, checked, 'bad-tool-bedrock');
    expectNoSuchTool(answered[1]!.body.messages.flatMap((m) => m.content).flatMap((b) => (b.toolResult ? [b.toolResult.content[0]?.text] : [])));
  });
});
