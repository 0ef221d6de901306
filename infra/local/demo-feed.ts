// The living demo fleet: while `npm start` runs, each whole hour brings the
// demo clusters' next samples, and now and then an incident (an alert that
// fires, metrics that degrade for a few hours, then the alert resolves),
// through the same ingest functions as real data. Everything is a function of
// (seed, cluster, hour), so a restart continues where it left off.
//
// Delivery is at most once: the hours are marked fed (DATA_DIR/demo-feed.json)
// before they are sent, because rollups add up what they receive and a
// repeated hour would count twice; a crash costs at most one batch of hours.
// The state file also records the fleet's size: DEMO_CLUSTERS changed on a later
// start does not resize a fleet already loaded (the loader runs only on an empty
// one), so the feed goes on feeding the size it fed before, and says so once.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomically } from './atomic-write.js';
import { MAX_DEMO_CLUSTERS } from './settings.js';
import { ALERT_RETENTION_DAYS, listClusterAlerts } from '../../shared/db/alerts.js';
import { getCluster } from '../../shared/db/clusters.js';
import { ingestAlerts, ingestLogs, ingestMetrics } from '../../shared/fleet/ingest.js';
import type { LogEventInput, MetricKey, MetricSample } from '../../shared/fleet/records.js';
import {
  ALERTS_FOR,
  clusterSeed,
  demoBaseline,
  demoClusters,
  diurnal,
  firingNotification,
  HEALTHY,
  HOUR,
  keepAboveP99,
  rng,
  quietValue,
  sampleValue,
  settledLevel,
  INCIDENT_TARGETS,
  type AlertNotification,
  type DemoCluster,
  type Trouble,
} from './demo-fleet.js';

export interface DemoFeedOptions {
  /** The state file (demo-feed.json) lives here. */
  dataDir: string;
  /** The demo fleet's size and seed, as loadDemoFleet used them (a size recorded in the state file wins). */
  clusters: number;
  seed?: number;
  now?: () => Date;
  log?: (line: string) => void;
}

export interface DemoFeedTick {
  hoursFed: number;
  samples: number;
  alertsFired: number;
  alertsResolved: number;
  /** Troubled clusters' ongoing alerts sent again (once a day, as Alertmanager repeats a firing group). */
  alertsRepeated: number;
}

export interface DemoFeed {
  /** Feeds every whole hour due up to now; never two at once (the local schedule sees to it). */
  tick(): Promise<DemoFeedTick>;
}

export const DEMO_FEED_FILE = 'demo-feed.json';
/** The scoring lookback: older hours would only be rolled into days nobody reads. */
const LOOKBACK_HOURS = 14 * 24;
/** Hours sent between two state writes. */
const HOURS_PER_BATCH = 6;
/** Fleet-wide, about this many incidents a day. */
const INCIDENTS_PER_DAY = 3;
const MAX_INCIDENT_HOURS = 4;
const TROUBLES = Object.keys(ALERTS_FOR) as Trouble[];
const DAY = 24 * HOUR;
/** How far back a troubled cluster's ongoing alert is looked for: as long as an alert is kept (a few items a cluster). */
const ONGOING_LOOKBACK_MS = ALERT_RETENTION_DAYS * DAY;

interface FeedState {
  seed: number;
  clusters: number;
  /** The first hour (epoch ms, an hour start) not yet fed. */
  next_hour: number;
}

interface Incident {
  trouble: Trouble;
  severity: 'warning' | 'critical';
  hours: number;
  /** Minutes into its first hour when the alert fires. */
  minute: number;
}

/** A small deterministic stream for one (cluster, hour, purpose). */
const streamFor = (cluster: DemoCluster, seed: number, hour: number, purpose: number) =>
  rng(clusterSeed(cluster, seed) ^ Math.imul(hour / HOUR, 2_654_435_761) ^ purpose);

/** The incident starting on this cluster in this hour, if any. */
function incidentStarting(cluster: DemoCluster, seed: number, hour: number, fleetSize: number): Incident | null {
  const random = streamFor(cluster, seed, hour, 0x1c1d);
  if (random() >= INCIDENTS_PER_DAY / (24 * fleetSize)) return null;
  return {
    trouble: cluster.trouble ?? TROUBLES[Math.floor(random() * TROUBLES.length)]!,
    severity: random() < 0.35 ? 'critical' : 'warning',
    hours: 1 + Math.floor(random() * MAX_INCIDENT_HOURS),
    minute: 1 + Math.floor(random() * 50),
  };
}

/** The incident under way on this cluster in this hour (started in it or in one of the hours before). */
function incidentDuring(cluster: DemoCluster, seed: number, hour: number, fleetSize: number): { incident: Incident; start: number } | null {
  for (let back = 0; back < MAX_INCIDENT_HOURS; back++) {
    const start = hour - back * HOUR;
    const incident = incidentStarting(cluster, seed, start, fleetSize);
    if (incident && back < incident.hours) return { incident, start };
  }
  return null;
}

/** One hour of one cluster: its character (drifted to its end state when troubled), noise, the day's rhythm, and any incident. */
function samplesAt(cluster: DemoCluster, baseline: Record<MetricKey, number>, seed: number, hour: number, incident: Incident | null): MetricSample[] {
  const random = streamFor(cluster, seed, hour, 0x5a3e);
  const at = new Date(hour);
  const rhythm = diurnal(at);
  const spike = incident ? INCIDENT_TARGETS[incident.trouble] : {};
  const hourValues: Partial<Record<MetricKey, number>> = {};
  return (Object.keys(HEALTHY) as MetricKey[]).map((key) => {
    let { value, noise } = quietValue(cluster, baseline, key, random, rhythm);
    if (noise !== null) {
      const level = settledLevel(cluster, key);
      if (level != null) value = level * noise;
      const incidentLevel = spike[key];
      if (incidentLevel) value = Math.max(value, incidentLevel[incident!.severity === 'critical' ? 1 : 0] * noise);
    }
    hourValues[key] = value = keepAboveP99(key, value, hourValues);
    return { cluster_id: cluster.inventory.cluster_id, metric_key: key, value: sampleValue(key, value), at: at.toISOString() };
  });
}

/** The demo clusters fed, with each one's baseline. */
interface FedFleet {
  clusters: DemoCluster[];
  baselines: Map<string, ReturnType<typeof demoBaseline>>;
}

export function createDemoFeed(options: DemoFeedOptions): DemoFeed {
  const seed = options.seed ?? 42;
  const clock = options.now ?? (() => new Date());
  const log = options.log ?? (() => undefined);
  const stateFile = join(options.dataDir, DEMO_FEED_FILE);
  // The fleet fed: built on the first tick, at the size the state file records (else DEMO_CLUSTERS's).
  let fleet: FedFleet | undefined;
  let notDemo: boolean | undefined;

  /** The state file's, when it is this feed's (same seed, a size the loader could have made). */
  async function storedState(): Promise<FeedState | undefined> {
    if (!existsSync(stateFile)) return undefined;
    const state = JSON.parse(await readFile(stateFile, 'utf8')) as FeedState;
    const size = state.clusters;
    const valid = state.seed === seed && Number.isInteger(size) && size > 0 && size <= MAX_DEMO_CLUSTERS && Number.isInteger(state.next_hour);
    return valid ? state : undefined;
  }

  function buildFleet(size: number): FedFleet {
    if (size !== options.clusters) {
      log(
        `demo feed: ${options.dataDir} holds a demo fleet of ${size} clusters, which goes on being fed; DEMO_CLUSTERS=${options.clusters} applies to a new data folder (delete this one to load ${options.clusters})`,
      );
    }
    const clusters = demoClusters(size, seed);
    return { clusters, baselines: new Map(clusters.map((c) => [c.inventory.cluster_id, demoBaseline(rng(clusterSeed(c, seed)))])) };
  }

  async function writeState(state: FeedState): Promise<void> {
    await writeFileAtomically(stateFile, `${JSON.stringify(state)}\n`);
  }

  /** The troubled clusters' trouble alerts still firing at `hour`, as their repeat notifies them. */
  async function ongoingAlerts(clusters: DemoCluster[], hour: number): Promise<AlertNotification[]> {
    const troubled = clusters.filter((c) => c.trouble && c.health !== 'healthy');
    const stored = await Promise.all(troubled.map((c) => listClusterAlerts(c.inventory.cluster_id, new Date(hour - ONGOING_LOOKBACK_MS))));
    return troubled.flatMap((cluster, i) =>
      stored[i]!.filter((a) => a.status === 'Firing' && a.alert_name === ALERTS_FOR[cluster.trouble!] && Date.parse(a.starts_at) <= hour).map((a) =>
        firingNotification(cluster, a.alert_name, a.labels.severity ?? a.severity.toLowerCase(), new Date(a.starts_at)),
      ),
    );
  }

  async function feedHours({ clusters, baselines }: FedFleet, hours: number[], now: Date, result: DemoFeedTick): Promise<void> {
    const samples: MetricSample[] = [];
    const firing: AlertNotification[] = [];
    const resolved: AlertNotification[] = [];
    const logs: LogEventInput[] = [];
    for (const hour of hours) {
      for (const cluster of clusters) {
        const during = incidentDuring(cluster, seed, hour, clusters.length);
        samples.push(...samplesAt(cluster, baselines.get(cluster.inventory.cluster_id)!, seed, hour, during?.incident ?? null));
        // The incident's alert fires in its first hour and resolves in the hour after its last.
        const starting = incidentStarting(cluster, seed, hour, clusters.length);
        if (starting) {
          firing.push(firingNotification(cluster, ALERTS_FOR[starting.trouble], starting.severity, new Date(hour + starting.minute * 60_000)));
          logs.push({
            cluster_id: cluster.inventory.cluster_id,
            at: new Date(hour + starting.minute * 60_000).toISOString(),
            level: 'error',
            message: `${ALERTS_FOR[starting.trouble]}: incident began`,
            source: 'be-1',
          });
        }
        const ended = incidentDuring(cluster, seed, hour - HOUR, clusters.length);
        if (ended && ended.start + ended.incident.hours * HOUR === hour) {
          const alert = firingNotification(
            cluster,
            ALERTS_FOR[ended.incident.trouble],
            ended.incident.severity,
            new Date(ended.start + ended.incident.minute * 60_000),
          );
          resolved.push({ ...alert, status: 'resolved', endsAt: new Date(hour + 5 * 60_000).toISOString() });
        }
      }
    }
    // Alertmanager repeats a firing group (repeat_interval): once a day each troubled cluster's ongoing alert is sent
    // again, so it stays heard firing. Sent once at the load, it left the views' window after 14 days, and with it
    // the alert its class was set with (a Warning cluster turned Healthy).
    const repeated: AlertNotification[] = [];
    for (const hour of hours.filter((h) => h % DAY === 0)) repeated.push(...(await ongoingAlerts(clusters, hour)));
    const metrics = await ingestMetrics(samples, now);
    result.samples += metrics.accepted;
    // Repeats first (an incident's alert read firing may resolve in these hours), then firing, then resolved: the latest
    // notification wins.
    if (repeated.length) result.alertsRepeated += (await ingestAlerts(repeated, now)).accepted;
    if (firing.length) result.alertsFired += (await ingestAlerts(firing, now)).accepted;
    if (resolved.length) result.alertsResolved += (await ingestAlerts(resolved, now)).accepted;
    if (logs.length) await ingestLogs(logs, now);
    const refused = metrics.rejected.length;
    if (refused) log(`demo feed: ${refused} samples refused (${JSON.stringify(metrics.rejected[0])})`);
  }

  return {
    async tick() {
      const now = clock();
      const result: DemoFeedTick = { hoursFed: 0, samples: 0, alertsFired: 0, alertsResolved: 0, alertsRepeated: 0 };
      if (options.clusters <= 0) return result;
      const stored = await storedState();
      fleet ??= buildFleet(stored?.clusters ?? options.clusters);
      if (notDemo === undefined) {
        notDemo = !(await getCluster(fleet.clusters[0]!.inventory.cluster_id));
        if (notDemo) log('demo feed: the stored fleet is not the demo fleet; nothing is fed');
      }
      if (notDemo) return result;

      // First run: the demo loader fed up to the hour before the current one.
      const state = stored ?? { seed, clusters: options.clusters, next_hour: Math.floor(now.getTime() / HOUR) * HOUR };
      // A whole hour is due once it has passed; a long stop resumes with the lookback, not every hour missed.
      const lastDue = Math.floor(now.getTime() / HOUR) * HOUR - HOUR;
      let next = Math.max(state.next_hour, lastDue + HOUR - LOOKBACK_HOURS * HOUR);
      while (next <= lastDue) {
        const hours: number[] = [];
        for (; next <= lastDue && hours.length < HOURS_PER_BATCH; next += HOUR) hours.push(next);
        await writeState({ ...state, next_hour: next }); // before sending: at most once
        await feedHours(fleet, hours, now, result);
        result.hoursFed += hours.length;
      }
      if (!existsSync(stateFile)) await writeState({ ...state, next_hour: next });
      return result;
    },
  };
}
