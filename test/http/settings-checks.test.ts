// Settings every function reads, checked where they are declared (shared/config/) so a
// bad value stops `npm start` and the synth instead of misbehaving on requests: the CORS
// allowlist holds origins exactly as browsers send them (its check compares strings),
// `*` only outside production; the JWT signing key has the 32 bytes signing needs.
import { describe, expect, it } from 'vitest';
import { agentBudgetSettings } from '../../shared/config/agent-budget.js';
import { coreSettings } from '../../shared/config/core.js';
import { checkSettings, defineSettings } from '../../shared/config/env.js';
import * as z from '../../shared/zod.js';
import { ingestSettings } from '../../shared/config/ingest.js';
import { patrolSettings } from '../../shared/config/patrol.js';
import { scrapeSettings } from '../../shared/config/scrape.js';
import { tokenSettings } from '../../shared/config/tokens.js';

const CORS_MESSAGE = /^CORS_ORIGINS must be a comma-separated list of origins as browsers send them/;

describe('CORS_ORIGINS', () => {
  it.each([
    ['a trailing slash', 'https://ops.example.com/'],
    ['no scheme', 'ops.example.com'],
    ['a path', 'https://ops.example.com/console'],
    ['another scheme', 'ftp://ops.example.com'],
    ['an upper-case host', 'https://Ops.example.com'],
    ['the default port spelled out', 'https://ops.example.com:443'],
    ['a bad entry among good ones', 'https://ops.example.com, https://admin.example.com/'],
  ])('refuses an entry with %s, naming the variable and not the value', (_what, value) => {
    for (const STAGE of ['prod', 'dev']) {
      const error = (() => {
        try {
          checkSettings(['core'], { STAGE, CORS_ORIGINS: value });
        } catch (thrown) {
          return thrown as Error;
        }
      })();
      expect(error?.message).toMatch(CORS_MESSAGE);
      expect(error?.message).not.toContain('ops.example.com/');
    }
  });

  it('takes origins with a port, in any spacing, as the production allowlist', () => {
    const { corsOrigins } = coreSettings.from({ STAGE: 'prod', CORS_ORIGINS: ' https://ops.example.com ,http://localhost:5173,,https://[::1]:8443' });
    expect(corsOrigins).toEqual(['https://ops.example.com', 'http://localhost:5173', 'https://[::1]:8443']);
  });

  it('refuses * in production, where it would open CORS to every site; outside it every origin is allowed anyway', () => {
    expect(() => checkSettings(['core'], { STAGE: 'prod', CORS_ORIGINS: '*' })).toThrow(
      'CORS_ORIGINS may not be * when STAGE is prod: list the origins allowed (empty: same-origin only).',
    );
    expect(() => coreSettings.from({ STAGE: 'prod', CORS_ORIGINS: 'https://ops.example.com, *' })).toThrow(/may not be \*/);
    expect(coreSettings.from({ STAGE: 'dev', CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
    expect(coreSettings.from({ STAGE: 'prod', CORS_ORIGINS: '' }).corsOrigins).toEqual([]);
  });
});

describe('INGEST_TOKEN and SCRAPE_TOKEN', () => {
  it('are refused by the start-up check when shorter than 32 characters, naming them and not the value; an ARN is taken unread', () => {
    expect(() => checkSettings([ingestSettings.concern], { INGEST_TOKEN: 'guessable' })).toThrow(/^INGEST_TOKEN must be at least 32 characters\.$/);
    expect(() => checkSettings([scrapeSettings.concern], { SCRAPE_TOKEN: 'x'.repeat(31) })).toThrow(/^SCRAPE_TOKEN must be at least 32 characters\.$/);
    expect(() => checkSettings([ingestSettings.concern, scrapeSettings.concern], { INGEST_TOKEN: 'x'.repeat(32), SCRAPE_TOKEN: ' '.repeat(3) })).not.toThrow();
    expect(() => checkSettings([ingestSettings.concern], { INGEST_TOKEN_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:ingest' })).not.toThrow();
  });

  it('stay out of the settings a module reads', () => {
    expect(ingestSettings.from({ INGEST_TOKEN: 'x'.repeat(40) })).toEqual({ ALERT_CLUSTER_LABEL: 'cluster_id' });
    expect(scrapeSettings.from({ SCRAPE_TOKEN: 'x'.repeat(40) })).toEqual({ SCRAPE_WINDOW_DAYS: 30 });
  });
});

describe('JWT_SECRET', () => {
  it('is refused by the start-up check when shorter than 32 bytes, naming it and not the value', () => {
    expect(() => checkSettings([tokenSettings.concern], { JWT_SECRET: 'tiny-signing-key' })).toThrow('JWT_SECRET must be at least 32 bytes.');
    expect(() => checkSettings([tokenSettings.concern], { JWT_SECRET: 'x'.repeat(31) })).toThrow(/^JWT_SECRET must be at least 32 bytes\.$/);
  });

  it('counts bytes, not characters, and takes a secret on AWS (its ARN) unread', () => {
    expect(() => checkSettings([tokenSettings.concern], { JWT_SECRET: 'é'.repeat(16) })).not.toThrow();
    expect(() => checkSettings([tokenSettings.concern], { JWT_SECRET: 'é'.repeat(15) })).toThrow(/at least 32 bytes/);
    expect(() => checkSettings([tokenSettings.concern], { JWT_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:jwt' })).not.toThrow();
  });
});

describe('numbers (budgets, seconds, whole numbers)', () => {
  const BUDGET = 'AGENT_DAILY_BUDGET_USD must be a number of US dollars from 0 (no limit) to 100000.';

  it.each([
    ['hexadecimal', '0x10'],
    ['binary', '0b11'],
    ['octal', '0o7'],
    ['an exponent', '1e2'],
    // Read by Number as 0, which is no limit at all: the budget an operator meant as tiny was none.
    ['a fraction that reads as zero', `0.${'0'.repeat(400)}1`],
    ['a sign', '-0'],
    ['Infinity', 'Infinity'],
  ])('refuses a budget not in decimal digits (%s), which Number would read, one as no limit at all', (_what, value) => {
    expect(() => agentBudgetSettings.from({ AGENT_DAILY_BUDGET_USD: value })).toThrow(BUDGET);
  });

  it('takes a budget in decimal digits, spaces around it, and blank as the default', () => {
    expect(agentBudgetSettings.from({ AGENT_DAILY_BUDGET_USD: ' 12.50 ' }).dailyUsd).toBe(12.5);
    expect(agentBudgetSettings.from({ AGENT_DAILY_BUDGET_USD: '0' }).dailyUsd).toBe(0);
    expect(agentBudgetSettings.from({ AGENT_DAILY_BUDGET_USD: '0.000001' }).dailyUsd).toBe(0.000001);
    expect(agentBudgetSettings.from({ AGENT_DAILY_BUDGET_USD: ' ' }).dailyUsd).toBe(50);
  });

  it('refuses seconds and whole numbers in hexadecimal or with an exponent, as budgets', () => {
    expect(() => patrolSettings.from({ PATROL_LEASE_SECONDS: '0x40' })).toThrow('PATROL_LEASE_SECONDS must be a number of seconds from 1 to 3600.');
    expect(() => scrapeSettings.from({ SCRAPE_WINDOW_DAYS: '3e1' })).toThrow('SCRAPE_WINDOW_DAYS must be a whole number of days from 1 to 365.');
    expect(scrapeSettings.from({ SCRAPE_WINDOW_DAYS: '30' }).SCRAPE_WINDOW_DAYS).toBe(30);
    expect(patrolSettings.from({ PATROL_LEASE_SECONDS: '90.5' }).leaseMs).toBe(90_500);
  });
});

describe('a concern is declared at import and built on its first read (shared/config/README.md)', () => {
  it('builds its schemas once, when first read or asked its variables, and names its variables without its secrets', () => {
    let builds = 0;
    const settings = defineSettings(
      'declared-lazily-test',
      () => {
        builds += 1;
        return { LAZY_TEST_SECONDS: z.optional(z.string()), LAZY_TEST_TOKEN: z.optional(z.string()), LAZY_TEST_TOKEN_ARN: z.optional(z.string()) };
      },
      { secrets: ['LAZY_TEST_TOKEN'] },
    );
    expect(builds).toBe(0);
    expect(settings.variables).toEqual(['LAZY_TEST_SECONDS']);
    expect(builds).toBe(1);
    expect(settings.from({ LAZY_TEST_SECONDS: ' 5 ' }).LAZY_TEST_SECONDS).toBe('5');
    expect(settings.from({}).LAZY_TEST_SECONDS).toBeUndefined();
    expect(builds).toBe(1);
  });
});
