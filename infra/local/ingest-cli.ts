// `npm run ingest -- FILE.json|FILE.jsonl`: sends fleet data to a running
// service's ingest routes (default the local one), in request-sized chunks (by count and under 6 MB),
// clusters first so metrics, logs and alerts refer to known clusters.
//   FILE.json:  an ingest body ({clusters}, {samples}, {events}) or an Alertmanager webhook ({version: "4", alerts}),
//               or an array of records;
//   FILE.jsonl: one record per line (cluster, metric sample, log event or Alertmanager alert), kinds mixed freely.
// Settings: INGEST_URL (default: the npm start running on $DATA_DIR, wherever it listens, else
// http://localhost:$PORT, PORT 3000), INGEST_TOKEN (default: the
// token npm start keeps in $DATA_DIR/ingest-token).
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { escapedBytes, LAMBDA_EVENT_BODY_BYTES } from '../../shared/http/lambda-payload.js';
import { INGEST_MAX_BODY_BYTES, INGEST_MAX_RECORDS, ingestGroup } from '../../shared/routes/ingest.js';
import { runningService } from './runtime-file.js';
import { INGEST_TOKEN_FILE, invocationDir, type LocalSettings, readLocalSettings } from './settings.js';

/** The ingest routes' names, one per kind of record (the route table's: their paths are its too). */
export type IngestKind = keyof typeof ingestGroup.routes;
export const KIND_ORDER: IngestKind[] = ['clusters', 'metrics', 'logs', 'alerts'];
const CHUNK: Record<IngestKind, number> = INGEST_MAX_RECORDS;
/**
 * A request's records stay under the ingest body limit and, escaped, under what a Lambda event
 * may carry (shared/http/lambda-payload.ts), with room for the envelope.
 */
const CHUNK_BYTES = Math.min(INGEST_MAX_BODY_BYTES, LAMBDA_EVENT_BODY_BYTES) - 64 * 1024;

export interface Planned {
  kind: IngestKind;
  /** 1-based record numbers in the file (line numbers for JSONL). */
  numbers: number[];
  body: Record<string, unknown>;
}

export function kindOfRecord(record: unknown): IngestKind | null {
  if (!record || typeof record !== 'object') return null;
  const r = record as Record<string, unknown>;
  if ('metric_key' in r) return 'metrics';
  if ('cluster_name' in r) return 'clusters';
  if ('labels' in r && 'startsAt' in r) return 'alerts';
  if ('message' in r && 'level' in r) return 'logs';
  return null;
}

function envelope(kind: IngestKind, records: unknown[]): Record<string, unknown> {
  if (kind === 'clusters') return { clusters: records };
  if (kind === 'metrics') return { samples: records };
  if (kind === 'logs') return { events: records };
  return { version: '4', status: 'firing', receiver: 'npm-run-ingest', alerts: records };
}

/** Splits a file into ingest requests; throws with the line number on a record it cannot classify. */
export function planIngest(text: string, fileName: string): Planned[] {
  const records: { n: number; kind: IngestKind; record: unknown }[] = [];
  const add = (n: number, record: unknown, kind = kindOfRecord(record)) => {
    if (!kind) throw new Error(`record ${n}: not a cluster, metric sample, log event or Alertmanager alert`);
    records.push({ n, kind, record });
  };
  if (fileName.endsWith('.jsonl')) {
    text.split('\n').forEach((line, i) => {
      if (!line.trim()) return;
      try {
        add(i + 1, JSON.parse(line));
      } catch (error) {
        throw new Error(`line ${i + 1}: ${error instanceof SyntaxError ? 'not valid JSON' : (error as Error).message.replace(/^record \d+: /, '')}`);
      }
    });
  } else {
    const doc: unknown = JSON.parse(text);
    const list = (items: unknown, kind?: IngestKind) => {
      for (const [i, r] of (Array.isArray(items) ? items : []).entries()) add(i + 1, r, kind ?? kindOfRecord(r));
    };
    if (Array.isArray(doc)) list(doc);
    else if (doc && typeof doc === 'object') {
      const d = doc as Record<string, unknown>;
      // Every kind the document holds is sent (an ingest body has one; a hand-made file may have several).
      const present = (
        [
          ['clusters', 'clusters'],
          ['samples', 'metrics'],
          ['events', 'logs'],
          ['alerts', 'alerts'],
        ] as const
      ).filter(([k]) => k in d);
      if (!present.length) throw new Error('the JSON holds none of clusters, samples, events or alerts');
      for (const [key, kind] of present) {
        if (!Array.isArray(d[key])) throw new Error(`its ${key} is not a list`);
        list(d[key], kind);
      }
    }
  }
  // A file that sends nothing is a mistake to say, not a silent success.
  if (!records.length) throw new Error('it holds no record to send');
  const plans: Planned[] = [];
  for (const kind of KIND_ORDER) {
    let chunk: typeof records = [];
    let bytes = 0;
    const flush = () => {
      if (chunk.length)
        plans.push({
          kind,
          numbers: chunk.map((c) => c.n),
          body: envelope(
            kind,
            chunk.map((c) => c.record),
          ),
        });
      chunk = [];
      bytes = 0;
    };
    for (const r of records.filter((x) => x.kind === kind)) {
      // Its weight escaped inside the event (at least its own size), less the quotes around it, plus a comma.
      const size = escapedBytes(JSON.stringify(r.record)) - 1;
      if (chunk.length >= CHUNK[kind] || (chunk.length > 0 && bytes + size > CHUNK_BYTES)) flush();
      chunk.push(r);
      bytes += size;
    }
    flush();
  }
  return plans;
}

async function main(): Promise<number> {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: npm run ingest -- FILE.json|FILE.jsonl');
    return 1;
  }
  // The local service's port and data folder as npm start reads them (a blank PORT= is its default, not "localhost:"),
  // only when one is needed: a deployed stack named by INGEST_URL and INGEST_TOKEN owes nothing to local settings.
  // A blank INGEST_URL or INGEST_TOKEN is unset, as a blank PORT is.
  // Without a trailing slash: `https://fleet.example.com/` would send `//api/…`, which no route takes.
  let base = process.env.INGEST_URL?.trim().replace(/\/+$/, '') || undefined;
  let token = process.env.INGEST_TOKEN?.trim() || undefined;
  let tokenFile: string | undefined;
  if (!base || !token) {
    let local: LocalSettings;
    try {
      local = readLocalSettings();
    } catch (error) {
      console.error((error as Error).message);
      return 1;
    }
    // The running service on DATA_DIR, wherever it listens (PORT=0, or PORT not set in this shell); else PORT's.
    const running = await runningService(local.dataDir);
    base ??= typeof running === 'object' ? running.url : `http://localhost:${local.port}`;
    tokenFile = resolve(local.dataDir, INGEST_TOKEN_FILE);
    token ??= (await readFile(tokenFile, 'utf8').catch(() => '')).trim();
  }
  if (!token) {
    console.error(`No ingest token: set INGEST_TOKEN, or start the service (npm start) so it creates one under DATA_DIR (${tokenFile} is missing).`);
    return 1;
  }
  const totals: Record<string, { accepted: number; rejected: number }> = {};
  const problems: string[] = [];
  let plans: Planned[];
  try {
    plans = planIngest(await readFile(resolve(invocationDir(), file), 'utf8'), file);
  } catch (error) {
    console.error(`${file}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  for (const plan of plans) {
    const res = await fetch(`${base}${ingestGroup.routes[plan.kind].path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(plan.body),
    }).catch((error: unknown) => error as Error);
    if (res instanceof Error) {
      console.error(`Could not reach the service at ${base} (${res.message}): is npm start running? (INGEST_URL, DATA_DIR or PORT names where)`);
      return 1;
    }
    const answer = (await res.json()) as { accepted?: number; rejected?: { index: number; reason: string }[]; detail?: string };
    if (!res.ok) {
      console.error(`${plan.kind}: ${res.status} ${answer.detail ?? ''}`);
      return 1;
    }
    const t = (totals[plan.kind] ??= { accepted: 0, rejected: 0 });
    t.accepted += answer.accepted ?? 0;
    t.rejected += answer.rejected?.length ?? 0;
    // A JSONL record is named by its line, as a line that is no record is (planIngest): blank lines are skipped, so
    // the nth record need not be on line n, and 'record 3' left the reader to guess which was meant.
    const unit = file.endsWith('.jsonl') ? 'line' : 'record';
    for (const r of answer.rejected ?? []) problems.push(`${unit} ${plan.numbers[r.index]} (${plan.kind}): ${r.reason}`);
  }
  for (const [kind, t] of Object.entries(totals)) console.log(`${kind}: ${t.accepted} accepted, ${t.rejected} rejected`);
  for (const p of problems.slice(0, 50)) console.log(`  ${p}`);
  if (problems.length > 50) console.log(`  … and ${problems.length - 50} more`);
  return problems.length ? 2 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
}
