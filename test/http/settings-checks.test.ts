// Settings every function reads, checked where they are declared (shared/config/) so a
// bad value stops `npm start` and the synth instead of misbehaving on requests: the CORS
// allowlist holds origins exactly as browsers send them (its check compares strings),
// `*` only outside production; the JWT signing key has the 32 bytes signing needs.
import { describe, expect, it } from 'vitest';
import { coreSettings } from '../../shared/config/core.js';
import { checkSettings } from '../../shared/config/env.js';
import { ingestSettings } from '../../shared/config/ingest.js';
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
