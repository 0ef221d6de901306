// The settings of `npm start` (readLocalSettings): the bootstrap superadmin's password
// follows the password rule of activation, so the account it creates is one login accepts.
import { describe, expect, it } from 'vitest';
import { readLocalSettings } from '../../infra/local/settings.js';

describe('ADMIN_PASSWORD', () => {
  it('refuses a password shorter than 8 characters, naming the variable', () => {
    expect(() => readLocalSettings({ ADMIN_PASSWORD: 'x' })).toThrow('ADMIN_PASSWORD: must be at least 8 characters');
  });

  it('refuses a password over 1,024 characters, which login would refuse with 422', () => {
    expect(() => readLocalSettings({ ADMIN_PASSWORD: 'x'.repeat(1025) })).toThrow(/^ADMIN_PASSWORD: .*1024/);
  });

  it('takes 8 to 1,024 characters as typed, and leaves it unset when blank', () => {
    expect(readLocalSettings({ ADMIN_PASSWORD: ' 8 chars' }).adminPassword).toBe(' 8 chars');
    expect(readLocalSettings({ ADMIN_PASSWORD: 'y'.repeat(1024) }).adminPassword).toHaveLength(1024);
    expect(readLocalSettings({ ADMIN_PASSWORD: '' }).adminPassword).toBeUndefined();
  });
});

describe('a bad number or flag', () => {
  it('is refused in one sentence naming the variable and its range, as every setting of the service is', () => {
    // Before, zod's generic words: "PORT: Invalid input: expected number, received NaN" for PORT=abc.
    expect(() => readLocalSettings({ PORT: 'abc' })).toThrow(/^PORT must be a whole number from 0 to 65535 \(0: any free port\)\.$/);
    expect(() => readLocalSettings({ PORT: '70000' })).toThrow(/^PORT must be a whole number from 0 to 65535/);
    expect(() => readLocalSettings({ DEMO_CLUSTERS: 'lots' })).toThrow(/^DEMO_CLUSTERS must be a whole number from 0 to 10000\.$/);
    expect(() => readLocalSettings({ LOCAL_RECOMPUTE_EVERY_SECONDS: '0' })).toThrow(
      /^LOCAL_RECOMPUTE_EVERY_SECONDS must be a whole number of seconds from 1 to 604800\.$/,
    );
    expect(() => readLocalSettings({ LOCAL_SCHEDULES: 'sometimes' })).toThrow(/^LOCAL_SCHEDULES must be true or false$/);
    expect(() => readLocalSettings({ DEMO_FEED: 'sometimes' })).toThrow(/^DEMO_FEED must be true or false$/);
  });

  it('still names each bad variable when several are', () => {
    expect(() => readLocalSettings({ PORT: 'abc', DEMO_CLUSTERS: '-1' })).toThrow(
      /^PORT must be a whole number from 0 to 65535 \(0: any free port\)\.; DEMO_CLUSTERS must be a whole number from 0 to 10000\.$/,
    );
  });

  it('keeps the defaults and the declared timetable when unset', () => {
    const s = readLocalSettings({});
    expect(s.port).toBe(3000);
    expect(s.demoClusters).toBe(60);
    expect(s.demoFeed).toBe(true);
    expect(s.demoFeedEverySeconds).toBe(300);
    expect(s.schedules).toEqual({ 'patrol-worker': 21_600, recompute: 900, 'metrics-puller': 300 });
    expect(readLocalSettings({ DEMO_CLUSTERS: '0' }).demoFeed).toBe(false);
    expect(readLocalSettings({ DEMO_CLUSTERS: '0', DEMO_FEED: 'true' }).demoFeed).toBe(false);
  });
});
