// The console's chat page in a real browser (Debian Chromium) through the whole
// local service, against the local OpenAI-compatible fake: without a provider the
// 503 is explained with the settings to set; with one, a question (Enter sends,
// Shift+Enter is a new line) gets its Markdown answer rendered, with its tool-call
// count and time, and a <script> or onerror in the model's Markdown is neither
// run nor kept; "New conversation" asks first when there is a conversation to lose (Keep it and Escape keep it),
// then clears the view and the service's history;
// an answer that arrives after the user left the page is kept and shown on the way back;
// the rate limit's 429 says when to send again, another tab's message being answered says so; signing out leaves no transcript
// in the tab's storage. axe in light, dark and on a phone.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { api, apiLogin, expectAccessible, launchBrowser, signIn, type TestBrowser } from '../support/browser.js';
import { type FakeOpenAi, openAiReply, startFakeOpenAi } from '../support/fake-openai.js';
import { startTestService } from '../support/local-service.js';

const PASSWORD = 'console-chat-admin-password';
const LLM_VARS = ['LLM_PROVIDER', 'LLM_MODEL', 'LLM_BASE_URL', 'LLM_API_KEY', 'LLM_RETRY_BASE_MS', 'LLM_MAX_ATTEMPTS'];
let service: LocalService;
let openai: FakeOpenAi;
let browser: TestBrowser;
let admin: string;
let page: Page;

beforeAll(async () => {
  for (const v of LLM_VARS) delete process.env[v];
  [service, openai] = await Promise.all([startTestService({ adminPassword: PASSWORD, demoClusters: 8 }), startFakeOpenAi({ apiKey: 'sk-console-chat' })]);
  [browser, admin] = await Promise.all([launchBrowser(service.url), apiLogin(service.url, 'admin', PASSWORD)]);
  page = await browser.page();
  await signIn(page, 'admin', PASSWORD, '/chat');
}, 120_000);

afterAll(async () => {
  for (const v of LLM_VARS) delete process.env[v];
  await browser?.close();
  await openai?.close();
  await service?.stop();
});

/** The service reads LLM_* per request (it runs in this process): the fake becomes the provider. */
const configure = () =>
  Object.assign(process.env, {
    LLM_PROVIDER: 'openai',
    LLM_MODEL: 'gpt-4o-mini',
    LLM_BASE_URL: openai.baseUrl,
    LLM_API_KEY: 'sk-console-chat',
    LLM_RETRY_BASE_MS: '5',
    LLM_MAX_ATTEMPTS: '1',
  });

beforeEach(() => openai.reset());

const log = () => page.getByRole('log', { name: 'Conversation' });
const input = () => page.getByRole('textbox', { name: 'Message' });

async function open(): Promise<void> {
  await page.goto('/chat');
  await page.getByRole('heading', { level: 1, name: 'Assistant' }).waitFor();
}

/** Types a message and presses Enter; resolves with the service's answer to it. */
async function ask(text: string) {
  const answered = page.waitForResponse((r) => r.url().endsWith('/api/chat/message') && r.request().method() === 'POST');
  await input().click();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
  return answered;
}

/** "New conversation" on a page that shows one: asked, then discarded; resolves once the service cleared it. */
async function discardConversation(): Promise<void> {
  await page.getByRole('button', { name: 'New conversation' }).click();
  await page.getByRole('button', { name: 'Discard conversation' }).click();
  await page.getByText('Conversation cleared.').waitFor();
}

describe('the chat page', { timeout: 90_000 }, () => {
  it('without a provider, says so on opening, before a question is typed, and explains the 503 in place: which settings to set', async () => {
    await open();
    const unavailable = page.locator('.chat-unavailable');
    await unavailable.getByRole('heading', { level: 2, name: 'The assistant cannot answer: its language model is not set up' }).waitFor();
    expect(await unavailable.textContent()).toMatch(/LLM_PROVIDER=bedrock.*LLM_PROVIDER=openai/);
    expect(await log().locator('.chat-user').count()).toBe(0);
    expect((await ask('hello')).status()).toBe(503);
    const failed = log().locator('.chat-failed');
    await failed.getByRole('heading', { name: 'The assistant is not available: its language model is not set up' }).waitFor();
    expect(await failed.textContent()).toMatch(/LLM_PROVIDER=bedrock.*LLM_PROVIDER=openai/);
    await expect.poll(() => log().locator('.chat-user').allTextContents()).toEqual(['Youhello']);
    await expectAccessible(page, '/chat with the 503');
    // Asked again, the same refusal is said in one line, not the whole explanation a second time.
    expect((await ask('and now?')).status()).toBe(503);
    await expect.poll(() => failed.count()).toBe(2);
    await failed.nth(1).getByText('Not answered: the language model is still not set up, as said above.').waitFor();
    expect(await failed.nth(1).getByRole('heading', { level: 3 }).count()).toBe(0);
    expect(await failed.first().getByRole('heading', { level: 3 }).count()).toBe(1);
  });

  it('with a provider set but its configuration incomplete, says what is missing and not that none is configured', async () => {
    Object.assign(process.env, { LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini' });
    try {
      await discardConversation();
      await open();
      const unavailable = page.locator('.chat-unavailable');
      await unavailable.getByText("LLM_PROVIDER is 'openai' but its configuration is incomplete: set LLM_BASE_URL", { exact: false }).waitFor();
      // A model is named (LLM_MODEL): a heading saying that none is configured would contradict the line under it.
      expect(await unavailable.getByRole('heading', { level: 2 }).textContent()).toBe('The assistant cannot answer: its language model is not set up');
      expect((await ask('hello')).status()).toBe(503);
      const failed = log().locator('.chat-failed');
      await failed.getByText('its configuration is incomplete', { exact: false }).waitFor();
      expect(await failed.getByRole('heading', { level: 3 }).textContent()).toBe('The assistant is not available: its language model is not set up');
    } finally {
      for (const v of LLM_VARS) delete process.env[v];
    }
  });

  it('answers with rendered, sanitised Markdown, its tool calls and time; Shift+Enter is a new line', async () => {
    configure();
    const status = page.waitForResponse((r) => r.url().endsWith('/api/chat/status'));
    await open();
    expect(await (await status).json()).toMatchObject({ available: true });
    expect(await page.locator('.chat-unavailable').count()).toBe(0);
    await discardConversation();
    openai
      .enqueueToolUse({ name: 'run_sql', input: { sql: 'SELECT count(*) AS n FROM clusters' } })
      .enqueueToolUse({ name: 'search_knowledge', input: { query: 'disk full' } })
      .enqueueText(
        [
          'There are **8** clusters.',
          '',
          '| tier | clusters |',
          '|---|---|',
          '| S | 3 |',
          '',
          // wider than the reply: each scrolls in a box a keyboard can reach (axe's scrollable-region-focusable)
          `| ${Array.from({ length: 14 }, (_, i) => `metric_number_${i}`).join(' | ')} |`,
          `|${'---|'.repeat(14)}`,
          `| ${Array.from({ length: 14 }, (_, i) => i).join(' | ')} |`,
          '',
          '```',
          `SELECT ${Array.from({ length: 30 }, (_, i) => `column_${i}`).join(', ')} FROM clusters`,
          '```',
          '',
          '<script>window.__chatPwned = "script"</script>',
          '<img src="x" onerror="window.__chatPwned = \'onerror\'" alt="x">',
          '<a href="javascript:window.__chatPwned=1">bad link</a>',
        ].join('\n'),
      );
    await input().click();
    await page.keyboard.type('How many');
    await page.keyboard.press('Shift+Enter');
    expect(await input().inputValue()).toBe('How many\n');
    const answered = await ask('clusters?');
    expect(answered.status()).toBe(200);
    const sent = openai
      .answered()[0]!
      .body.messages.filter((m) => m.role === 'user')
      .at(-1);
    expect(sent?.content).toBe('How many\nclusters?');

    const reply = log().locator('.chat-assistant').last();
    await reply.locator('strong', { hasText: '8' }).waitFor();
    expect(await reply.locator('table').first().locator('td').allTextContents()).toEqual(['S', '3']);
    // the wide table's box is what scrolls (the box a keyboard can focus), as does the code block
    const scrolls = (selector: string) =>
      page.evaluate(`[...document.querySelectorAll('.chat-assistant:last-of-type ${selector}')].map((box) => box.scrollWidth > box.clientWidth)`);
    expect(await scrolls('.markdown-table')).toEqual([false, true]);
    expect(await scrolls('pre[tabindex="0"]')).toEqual([true]);
    expect(await reply.locator('.chat-tools').textContent()).toBe('2 tool calls');
    expect(await reply.locator('.chat-duration').textContent()).toMatch(/^answered in \d+(\.\d)? s$/);
    // sanitised: nothing ran, and nothing dangerous is left in the DOM
    expect(await reply.locator('script').count()).toBe(0);
    expect(await reply.locator('[onerror]').count()).toBe(0);
    expect(await reply.locator('a[href^="javascript:"]').count()).toBe(0);
    expect(await page.evaluate('window.__chatPwned')).toBeUndefined();
    expect(await input().inputValue()).toBe('');
    // Its two tables and its code block are groups, not landmarks: a landmark's name would repeat (axe landmark-unique).
    const findings = await expectAccessible(page, '/chat with an answer');
    expect(findings.filter((f) => f.id.startsWith('landmark'))).toEqual([]);
    expect(await reply.getByRole('group', { name: 'Table' }).count()).toBe(2);

    // dark, then on a phone: still accessible, and nothing wider than the screen
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible(page, '/chat dark');
    await page.setViewportSize({ width: 375, height: 740 });
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await expectAccessible(page, '/chat on a phone');
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('"New conversation" clears the view and the service\'s history', async () => {
    configure();
    await open();
    // the conversation is still shown after navigating back
    await log().locator('.chat-assistant').first().waitFor();
    const resets: string[] = [];
    const seeReset = (r: { url(): string }) => void (r.url().endsWith('/api/chat/reset') && resets.push(r.url()));
    page.on('request', seeReset);
    const newConversation = page.getByRole('button', { name: 'New conversation' });
    const discard = page.getByRole('button', { name: 'Discard conversation' });
    // A conversation to lose: the button asks first, and "Keep it" (or Escape) keeps it, focus back on the button.
    const turnsShown = await log().locator('article').count();
    await newConversation.click();
    await page.getByText('Discard this conversation? The assistant forgets it too.').waitFor();
    await expect.poll(() => page.evaluate('document.activeElement?.textContent')).toBe('Discard conversation');
    await expectAccessible(page, '/chat asking before a new conversation');
    await page.getByRole('button', { name: 'Keep it' }).click();
    await expect.poll(() => page.evaluate('document.activeElement?.textContent')).toBe('New conversation');
    await newConversation.click();
    await discard.waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.evaluate('document.activeElement?.textContent')).toBe('New conversation');
    expect(await log().locator('article').count()).toBe(turnsShown);
    page.off('request', seeReset);
    expect(resets).toEqual([]);
    const reset = page.waitForResponse((r) => r.url().endsWith('/api/chat/reset'));
    await newConversation.click();
    await discard.click();
    expect((await reset).status()).toBe(200);
    await page.getByText('Conversation cleared.').waitFor();
    expect(await log().locator('article').count()).toBe(0);
    await expect.poll(() => page.evaluate('document.activeElement?.tagName')).toBe('TEXTAREA');
    // Nothing shown to lose: no question, the service's history is cleared at once (another tab may have one).
    const again = page.waitForResponse((r) => r.url().endsWith('/api/chat/reset'));
    await newConversation.click();
    expect((await again).status()).toBe(200);
    expect(await discard.count()).toBe(0);

    openai.enqueueText('Fresh start.');
    expect((await ask('hi again')).status()).toBe(200);
    await log().getByText('Fresh start.').waitFor();
    expect(await log().locator('.chat-tools').textContent()).toBe('no tool calls');
    // the model saw only this message: the earlier turns were forgotten
    expect(
      openai
        .answered()[0]!
        .body.messages.filter((m) => m.role === 'user')
        .map((m) => m.content),
    ).toEqual(['hi again']);
  });

  it('keeps an answer that arrives after the user left the page, and shows it under way on the way back', async () => {
    configure();
    await open();
    openai.enqueue({ kind: 'delay', ms: 4_000, then: { kind: 'text', text: 'Answered while you were away.' } });
    const answered = ask('a slow question');
    await log().getByText('a slow question').waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' });
    const away = async () => {
      await nav.getByRole('link', { name: 'Health' }).click();
      await page.getByRole('heading', { level: 1, name: 'Health' }).waitFor();
    };
    const back = async () => {
      await nav.getByRole('link', { name: 'Chat' }).click();
      await page.getByRole('heading', { level: 1, name: 'Assistant' }).waitFor();
    };
    await away();
    await back();
    // still under way: said so, and nothing can be sent meanwhile
    await page.locator('.chat-waiting').waitFor();
    expect(await page.getByRole('button', { name: 'New conversation' }).isDisabled()).toBe(true);
    await away();
    expect((await answered).status()).toBe(200);
    await back();
    await log().getByText('Answered while you were away.').waitFor();
    expect(await page.locator('.chat-waiting').count()).toBe(0);
  });

  it('explains in place that another of the same person’s messages is being answered, and sends again at once when asked', async () => {
    configure();
    process.env.CHAT_DAILY_BUDGET_USD = '5';
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      await open();
      // The same person, from another tab (the API): its answer held at the model until this tab has been refused.
      openai.enqueue({ kind: 'held', until: held, then: openAiReply.text('the other tab’s answer') });
      const other = api(service.url, admin, 'POST', '/api/chat/message', { message: 'from another tab' });
      await expect.poll(() => openai.received.length).toBe(1);
      const answered = await ask('from this tab');
      expect(answered.status()).toBe(429);
      const failed = log().locator('.chat-failed');
      await failed.getByRole('heading', { name: 'Another of your messages is still being answered' }).waitFor();
      expect(await failed.locator('time').count()).toBe(1);
      await expectAccessible(page, '/chat with another message being answered');
      release();
      expect((await other).status).toBe(200);
      openai.enqueueText('answered here');
      const again = page.waitForResponse((r) => r.url().endsWith('/api/chat/message') && r.request().method() === 'POST');
      await failed.getByRole('button', { name: 'Send again' }).click();
      expect((await again).status()).toBe(200);
      await log().getByText('answered here').waitFor();
    } finally {
      release();
      delete process.env.CHAT_DAILY_BUDGET_USD;
    }
  });

  it('shows a reply nested thousands of levels deep as its text; the page stays up', async () => {
    configure();
    await open();
    const deep = `${'>'.repeat(3000)} deepest`;
    openai.enqueueText(deep);
    expect((await ask('nest it')).status()).toBe(200);
    const reply = log().locator('.chat-assistant').last();
    await reply.locator('.markdown-plain').getByText('deepest', { exact: false }).waitFor();
    expect(await reply.locator('.markdown-plain').textContent()).toBe(deep);
    await input().waitFor();
  });

  // before the 429's test, which uses up the minute's messages
  it('an answer that arrives after signing out is not written back into the tab', async () => {
    configure();
    await open();
    openai.enqueue({ kind: 'delay', ms: 2_000, then: { kind: 'text', text: 'Answered after you left.' } });
    const answered = ask('asked before signing out');
    await log().getByText('asked before signing out').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((u) => u.pathname === '/sign-in');
    expect((await answered).status()).toBe(200);
    // signed in again on the same tab: no answer without its question, nothing kept from the ended session
    await signIn(page, 'admin', PASSWORD, '/chat');
    await page.getByRole('heading', { level: 1, name: 'Assistant' }).waitFor();
    expect(await page.evaluate<string[]>("Object.keys(sessionStorage).filter((k) => k.startsWith('fleet-health.chat.'))")).toEqual([]);
    expect(await log().locator('article').count()).toBe(0);
  });
  it('explains the 429 in place: when to send again (Retry-After), in UTC though the browser is in New York', async () => {
    configure();
    // What Playwright's timezoneId context option sets; undone below, for the tests after this one.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Emulation.setTimezoneOverride', { timezoneId: 'America/New_York' });
    try {
      await open();
      expect(await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')).toBe('America/New_York');
      // use up the minute's 20 messages through the API as the same user
      let status = 200;
      for (let i = 0; i < 25 && status === 200; i++) status = (await api(service.url, admin, 'POST', '/api/chat/message', { message: `ping ${i}` })).status;
      expect(status).toBe(429);
      const answered = await ask('one more');
      expect(answered.status()).toBe(429);
      const retryAfter = Number(await answered.headerValue('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      const failed = log().locator('.chat-failed');
      await failed.getByRole('heading', { name: /Too many messages/ }).waitFor();
      expect(await failed.textContent()).toMatch(/at most 20 messages a minute/);
      expect(await failed.locator('time').count()).toBe(1);
      // The time of day to send again, to the second, in UTC and labelled so.
      const until = new Date((await failed.locator('time').getAttribute('datetime')) ?? '').toISOString();
      expect(await failed.locator('time').textContent()).toBe(`${until.slice(11, 19)} UTC`);
      expect(await failed.getByRole('button', { name: /Send again/ }).isDisabled()).toBe(true);
      await expectAccessible(page, '/chat with the 429');
    } finally {
      await cdp.send('Emulation.setTimezoneOverride', { timezoneId: '' });
      await cdp.detach();
    }
  });

  it('signing out leaves no transcript in the tab', async () => {
    await open();
    await log().locator('article').first().waitFor();
    const kept = () => page.evaluate<string[]>("Object.keys(sessionStorage).filter((k) => k.startsWith('fleet-health.')).sort()");
    expect(await kept()).toEqual(['fleet-health.chat.admin', 'fleet-health.session']);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((u) => u.pathname === '/sign-in');
    expect(await kept()).toEqual([]);
    // signed in again, the page starts empty: the service's history is its own
    await signIn(page, 'admin', PASSWORD, '/chat');
    await page.getByRole('heading', { level: 1, name: 'Assistant' }).waitFor();
    expect(await log().locator('article').count()).toBe(0);
  });
});
