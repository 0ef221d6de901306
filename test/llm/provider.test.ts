// The LLM configuration (LLM_* variables → provider or 503) and the retry
// policy's arithmetic. The providers' wire behaviour is in bedrock.test.ts and
// openai.test.ts.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { llmSettings } from '../../shared/config/llm.js';
import { forgetSecrets } from '../../shared/config/secrets.js';
import { ServiceUnavailable } from '../../shared/http/errors.js';
import { describeLlmConfig, llmProvider } from '../../shared/llm/provider.js';
import { retryAfterMs } from '../../shared/http/outbound.js';
import { backoffMs, DEFAULT_RETRY } from '../../shared/llm/retry.js';
import { startFakeOpenAi } from '../support/fake-openai.js';

const KEY = 'sk-config-test-S3CRET-0123456789';
const openaiEnv = { LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini', LLM_BASE_URL: 'https://api.openai.com', LLM_API_KEY: KEY };
const bedrockEnv = { LLM_PROVIDER: 'bedrock', LLM_MODEL: 'anthropic.claude-3-5-sonnet-20240620-v1:0' };

/** The 503 llmProvider() throws for `env`; its detail never echoes a configured value. */
function unavailable(env: NodeJS.ProcessEnv): string {
  let thrown: unknown;
  try {
    llmProvider(env);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ServiceUnavailable);
  const detail = (thrown as ServiceUnavailable).message;
  expect((thrown as ServiceUnavailable).status).toBe(503);
  expect(detail).not.toContain(KEY);
  return detail;
}

afterEach(() => {
  vi.unstubAllEnvs();
  forgetSecrets();
});

describe('llmProvider()', () => {
  it.each([{}, { LLM_PROVIDER: '' }, { LLM_PROVIDER: '   ' }, { LLM_MODEL: 'gpt-4o-mini', LLM_BASE_URL: 'https://api.openai.com' }])(
    'is null when LLM_PROVIDER is unset or blank (%j)',
    (env) => {
      expect(llmProvider(env)).toBeNull();
    },
  );

  it('describes how to configure a provider', () => {
    expect(describeLlmConfig()).toBe(
      'No LLM provider is configured: set LLM_PROVIDER=bedrock (with LLM_MODEL) or LLM_PROVIDER=openai (with LLM_MODEL, LLM_BASE_URL and LLM_API_KEY).',
    );
  });

  it('builds the configured provider (names case-insensitive, values trimmed) without loading anything', () => {
    expect(llmProvider({ ...bedrockEnv, LLM_PROVIDER: ' Bedrock ' })).toMatchObject({ name: 'bedrock', model: bedrockEnv.LLM_MODEL });
    expect(llmProvider({ ...openaiEnv, LLM_PROVIDER: 'OpenAI', LLM_MODEL: ' gpt-4o-mini ' })).toMatchObject({ name: 'openai', model: 'gpt-4o-mini' });
  });

  it('refuses an LLM_REASONING_EFFORT that is not an effort, naming the ones there are', () => {
    // `minimal` is gpt-5's only: the o-series and gpt-5.1 refuse it, and then every call would fail.
    for (const effort of ['max', 'minimal', 'none']) {
      expect(unavailable({ ...openaiEnv, LLM_REASONING_EFFORT: effort })).toContain('LLM_REASONING_EFFORT must be one of low, medium, high, or unset.');
    }
    expect(llmProvider({ ...openaiEnv, LLM_REASONING_EFFORT: ' low ' })).toMatchObject({ name: 'openai' });
    expect(llmSettings.from({ ...openaiEnv, LLM_REASONING_EFFORT: 'high' }).provider).toMatchObject({ kind: 'openai', reasoningEffort: 'high' });
    expect(llmSettings.from(openaiEnv).provider).not.toHaveProperty('reasoningEffort');
  });

  it('refuses an unknown provider', () => {
    expect(unavailable({ LLM_PROVIDER: 'anthropic' })).toBe("LLM_PROVIDER 'anthropic' is unknown: set it to 'bedrock' or 'openai', or leave it unset.");
  });

  it('names what bedrock is missing', () => {
    expect(unavailable({ LLM_PROVIDER: 'bedrock' })).toBe("LLM_PROVIDER is 'bedrock' but its configuration is incomplete: set LLM_MODEL.");
  });

  it('names everything openai is missing', () => {
    expect(unavailable({ LLM_PROVIDER: 'openai' })).toBe(
      "LLM_PROVIDER is 'openai' but its configuration is incomplete: set LLM_MODEL, LLM_BASE_URL, LLM_API_KEY (or LLM_API_KEY_ARN).",
    );
    expect(unavailable({ ...openaiEnv, LLM_API_KEY: '' })).toBe(
      "LLM_PROVIDER is 'openai' but its configuration is incomplete: set LLM_API_KEY (or LLM_API_KEY_ARN).",
    );
  });

  it('accepts LLM_API_KEY_ARN instead of the key, and no key for a server on localhost', () => {
    expect(llmProvider({ ...openaiEnv, LLM_API_KEY: '', LLM_API_KEY_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:llm-key' })?.name).toBe(
      'openai',
    );
    for (const host of ['localhost:11434', '127.0.0.1:8000', '[::1]:8080']) {
      expect(llmProvider({ ...openaiEnv, LLM_API_KEY: '', LLM_BASE_URL: `http://${host}/v1` })?.name).toBe('openai');
    }
  });

  it.each([
    [
      'plain http to a remote host',
      'http://api.openai.com',
      'LLM_BASE_URL must be an https URL without credentials or query in it (plain http only to localhost).',
    ],
    [
      'credentials in the URL',
      `https://user:${KEY}@llm.example.com`,
      'LLM_BASE_URL must be an https URL without credentials or query in it (plain http only to localhost).',
    ],
    [
      'a query string',
      `https://llm.example.com/?key=${KEY}`,
      'LLM_BASE_URL must be an https URL without credentials or query in it (plain http only to localhost).',
    ],
    ['not a URL', `api.openai.com ${KEY}`, 'LLM_BASE_URL is not a valid URL.'],
  ])('refuses LLM_BASE_URL with %s, without echoing it', (_, url, detail) => {
    expect(unavailable({ ...openaiEnv, LLM_BASE_URL: url })).toBe(detail);
  });

  it('refuses a bedrock endpoint override that is not https', () => {
    expect(unavailable({ ...bedrockEnv, AWS_ENDPOINT_URL_BEDROCK_RUNTIME: 'http://bedrock.example.com' })).toMatch(
      /^AWS_ENDPOINT_URL_BEDROCK_RUNTIME must be an https URL/,
    );
  });

  it.each([
    ['LLM_TIMEOUT_MS', '0', 'LLM_TIMEOUT_MS must be a positive whole number of milliseconds (at most 900000).'],
    ['LLM_TIMEOUT_MS', '1.5', 'LLM_TIMEOUT_MS must be a positive whole number of milliseconds (at most 900000).'],
    ['LLM_MAX_ATTEMPTS', '0', 'LLM_MAX_ATTEMPTS must be a whole number from 1 to 10.'],
    ['LLM_MAX_ATTEMPTS', '11', 'LLM_MAX_ATTEMPTS must be a whole number from 1 to 10.'],
    ['LLM_MAX_ATTEMPTS', 'four', 'LLM_MAX_ATTEMPTS must be a whole number from 1 to 10.'],
    ['LLM_RETRY_BASE_MS', '-1', 'LLM_RETRY_BASE_MS must be a whole number of milliseconds from 0 to 60000.'],
  ])('refuses %s=%s', (name, value, detail) => {
    expect(unavailable({ ...bedrockEnv, [name]: value })).toBe(detail);
    expect(unavailable({ ...openaiEnv, [name]: value })).toBe(detail);
  });

  it('loads the Bedrock SDK on the first converse(), not before', async () => {
    // A fresh process: this one's module cache already holds the SDK from other suites.
    const script = `
      import { createRequire } from 'node:module';
      const { llmProvider } = await import('./shared/llm/provider.ts');
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('client-bedrock-runtime'));
      const provider = llmProvider({ LLM_PROVIDER: 'bedrock', LLM_MODEL: 'm', AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL_BEDROCK_RUNTIME: 'http://127.0.0.1:9', LLM_MAX_ATTEMPTS: '1' });
      const before = loaded();
      await provider.converse({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }).catch(() => undefined);
      console.log(JSON.stringify({ before, after: loaded() }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: process.cwd(),
      env: { ...process.env, AWS_ACCESS_KEY_ID: 'AKIDLAZY', AWS_SECRET_ACCESS_KEY: 'lazy' },
    });
    expect(JSON.parse(stdout)).toEqual({ before: false, after: true });
  });

  it('fetches the key through secret() when only LLM_API_KEY_ARN is configured', async () => {
    const fake = await startFakeOpenAi({ apiKey: KEY });
    try {
      // secret() prefers the plain variable in process.env: no Secrets Manager call in the test.
      vi.stubEnv('LLM_API_KEY', KEY);
      const provider = llmProvider({
        ...openaiEnv,
        LLM_BASE_URL: fake.baseUrl,
        LLM_API_KEY: '',
        LLM_API_KEY_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:llm',
      });
      await provider!.converse({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
      expect(fake.received[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    } finally {
      await fake.close();
    }
  });
});

describe('retry policy', () => {
  const policy = { ...DEFAULT_RETRY, baseDelayMs: 500, maxDelayMs: 20_000 };

  it('backs off exponentially with jitter between half and all of each step, capped', () => {
    for (let i = 0; i < 50; i += 1) {
      expect(backoffMs(1, policy)).toBeGreaterThanOrEqual(250);
      expect(backoffMs(1, policy)).toBeLessThanOrEqual(500);
      expect(backoffMs(3, policy)).toBeGreaterThanOrEqual(1_000);
      expect(backoffMs(3, policy)).toBeLessThanOrEqual(2_000);
      expect(backoffMs(12, policy)).toBeLessThanOrEqual(20_000);
    }
  });

  it('prefers Retry-After, capped', () => {
    expect(backoffMs(1, policy, 3_000)).toBe(3_000);
    expect(backoffMs(1, policy, 600_000)).toBe(20_000);
  });

  it('reads Retry-After in seconds or as a date, and retry-after-ms', () => {
    const headers = (values: Record<string, string>) => (name: string) => values[name];
    expect(retryAfterMs(headers({ 'retry-after': '2' }))).toBe(2_000);
    expect(retryAfterMs(headers({ 'retry-after': '0.5' }))).toBe(500);
    expect(retryAfterMs(headers({ 'retry-after-ms': '750', 'retry-after': '1' }))).toBe(750);
    const inTen = retryAfterMs(headers({ 'retry-after': new Date(Date.now() + 10_000).toUTCString() }))!;
    expect(inTen).toBeGreaterThan(8_000);
    expect(inTen).toBeLessThanOrEqual(10_000);
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterMs(headers({}))).toBeUndefined();
  });
});
