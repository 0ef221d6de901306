// The local stand-in for EventBridge: the timetable, no overlapping runs, the
// settings that shorten or switch it off, and what it is for: an alert issue
// whose quiet period has passed is resolved by the scheduled recompute alone.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { readLocalSettings } from '../../infra/local/settings.js';
import { startLocalSchedules } from '../../infra/local/schedules.js';
import type { LocalService } from '../../infra/local/service.js';
import { createLogger } from '../../shared/log.js';
import { scheduledWorkers } from '../../shared/workers.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';

const log = createLogger('test');

describe('local schedules', () => {
  it('runs each job on its interval and never starts a run while the previous one is going', async () => {
    let runs = 0;
    let concurrent = 0;
    let maxConcurrent = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const schedules = startLocalSchedules(
      [
        {
          name: 'slow',
          everyMs: 20,
          run: async () => {
            runs++;
            maxConcurrent = Math.max(maxConcurrent, ++concurrent);
            await gate;
            concurrent--;
          },
        },
      ],
      log,
    );
    await sleep(200); // ten ticks while the first run waits on the gate
    expect(runs).toBe(1);
    release();
    await sleep(200);
    expect(runs).toBeGreaterThan(1);
    expect(maxConcurrent).toBe(1);
    await schedules.stop();
    const after = runs;
    await sleep(100);
    expect(runs).toBe(after);
  });

  it('keeps running after a failed run, and runNow answers the run result', async () => {
    let calls = 0;
    const schedules = startLocalSchedules(
      [
        {
          name: 'flaky',
          everyMs: 60_000,
          run: async () => {
            if (++calls === 1) throw new Error('first run fails');
            return { calls };
          },
        },
      ],
      log,
    );
    expect(await schedules.runNow('flaky')).toBeUndefined();
    expect(await schedules.runNow('flaky')).toEqual({ calls: 2 });
    await expect(schedules.runNow('missing')).rejects.toThrow(/no scheduled job/);
    await schedules.stop();
  });

  it('runs two runNow calls made during a run one after the other, never at once', async () => {
    let concurrent = 0;
    let maxConcurrent = 0;
    const gates: (() => void)[] = [];
    const schedules = startLocalSchedules(
      [
        {
          name: 'gated',
          everyMs: 60_000,
          run: async () => {
            maxConcurrent = Math.max(maxConcurrent, ++concurrent);
            await new Promise<void>((open) => gates.push(open));
            concurrent--;
            return gates.length;
          },
        },
      ],
      log,
    );
    const first = schedules.runNow('gated');
    const [second, third] = [schedules.runNow('gated'), schedules.runNow('gated')];
    // Each run ends only when its gate opens: open whichever is waiting until all three have run.
    const all = Promise.all([first, second, third]);
    for (let opened = 0; opened < 3; opened++) {
      while (gates.length === 0) await sleep(1);
      gates.shift()!();
    }
    await all;
    expect(maxConcurrent).toBe(1);
    await schedules.stop();
  });
});

describe('local settings', () => {
  it('defaults to the declared timetable, with the demo feed on for a demo fleet', () => {
    const s = readLocalSettings({});
    expect(s).toMatchObject({ port: 3000, dataDir: '.data', demoClusters: 60, demoFeed: true, demoFeedEverySeconds: 300 });
    expect(s.schedules).toEqual(Object.fromEntries(scheduledWorkers().map(({ name, schedule }) => [name, schedule.everyMinutes * 60])));
    expect(s.schedules).toEqual({ recompute: 900, 'patrol-worker': 21_600, 'metrics-puller': 300 });
  });

  it('shortens intervals per worker, switches schedules and the feed off, and refuses bad values by name', () => {
    expect(readLocalSettings({ LOCAL_RECOMPUTE_EVERY_SECONDS: '30', LOCAL_PATROL_WORKER_EVERY_SECONDS: '120' }).schedules).toEqual({
      recompute: 30,
      'patrol-worker': 120,
      'metrics-puller': 300,
    });
    expect(readLocalSettings({ LOCAL_SCHEDULES: 'false' }).schedules).toBeUndefined();
    expect(readLocalSettings({ DEMO_FEED: 'off' }).demoFeed).toBe(false);
    expect(readLocalSettings({ DEMO_CLUSTERS: '0' }).demoFeed).toBe(false);
    expect(() => readLocalSettings({ LOCAL_RECOMPUTE_EVERY_SECONDS: '0' })).toThrow(/LOCAL_RECOMPUTE_EVERY_SECONDS/);
    expect(() => readLocalSettings({ LOCAL_SCHEDULES: 'sometimes' })).toThrow(/LOCAL_SCHEDULES/);
    expect(() => readLocalSettings({ DEMO_CLUSTERS: '-1' })).toThrow(/DEMO_CLUSTERS/);
    expect(() => readLocalSettings({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => readLocalSettings({ DEMO_FEED: 'maybe' })).toThrow(/DEMO_FEED/);
  });
});

describe('an alert issue past its quiet period (issue-rules quiet_minutes: 30)', () => {
  // An alert that resolved 30 minutes minus a few seconds ago: Ongoing when it
  // arrives, due to resolve a few seconds later, and only a regrouping does it.
  async function resolvedAlmostQuietAgo(service: LocalService, fingerprint: string) {
    const clusters = (await get(service, '/api/fleet/scores')).scores as { cluster_id: string }[];
    const clusterId = clusters[clusters.length - 1]!.cluster_id;
    const endsAt = new Date(Date.now() - 30 * 60_000 + 6_000);
    const res = await fetch(`${service.url}/api/ingest/alerts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${service.ingestToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        version: '4',
        status: 'resolved',
        receiver: 'fleet',
        groupLabels: {},
        commonLabels: {},
        commonAnnotations: {},
        externalURL: 'http://am',
        groupKey: fingerprint,
        truncatedAlerts: 0,
        alerts: [
          {
            status: 'resolved',
            labels: { alertname: `QuietTest${fingerprint}`, cluster_id: clusterId, severity: 'warning' },
            annotations: {},
            startsAt: new Date(endsAt.getTime() - 10 * 60_000).toISOString(),
            endsAt: endsAt.toISOString(),
            generatorURL: 'http://prom',
            fingerprint,
          },
        ],
      }),
    });
    expect(res.status).toBe(200);
    return `QuietTest${fingerprint}`;
  }
  const tokens = new Map<LocalService, string>();
  const get = async (service: LocalService, path: string) => {
    const token = tokens.get(service) ?? (await userToken('viewer', 'schedule-viewer'));
    tokens.set(service, token);
    const res = await fetch(`${service.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status, path).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };
  const statusOf = async (service: LocalService, alertName: string) =>
    ((await get(service, `/api/issues?search=${alertName}`)).issues as { status: string }[])[0]?.status;

  it('stays Ongoing without local schedules', async () => {
    const service = await startTestService({ demoClusters: 3 });
    try {
      const name = await resolvedAlmostQuietAgo(service, 'a0a0a0a0a0a0a0a0');
      expect(await statusOf(service, name)).toBe('Ongoing');
      await sleep(9_000);
      expect(await statusOf(service, name)).toBe('Ongoing');
    } finally {
      await service.stop();
    }
  }, 60_000);

  it('becomes Resolved through the scheduled recompute, intervals shortened to 2 s', async () => {
    const service = await startTestService({ demoClusters: 3, schedules: { recompute: 2 } });
    try {
      await service.startupRuns;
      const name = await resolvedAlmostQuietAgo(service, 'b1b1b1b1b1b1b1b1');
      expect(await statusOf(service, name)).toBe('Ongoing');
      let status: string | undefined;
      for (let i = 0; i < 60 && status !== 'Resolved'; i++) {
        await sleep(500);
        status = await statusOf(service, name);
      }
      expect(status).toBe('Resolved');
    } finally {
      await service.stop();
    }
  }, 60_000);
});
