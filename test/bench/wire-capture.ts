// A recording proxy in front of DynamoDB Local, for the refresh floor (issue 21):
// every response body the service receives during a run, kept as the bytes that
// came over the wire, so the bench can time parsing exactly what a refresh read.
// Used for a separate capture run: the timed refresh goes straight to DynamoDB Local.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WireCapture {
  /** The endpoint to point AWS_ENDPOINT_URL_DYNAMODB at. */
  endpoint: string;
  /** Response bodies received since the last take(), in arrival order. */
  take(): Buffer[];
  close(): Promise<void>;
}

export async function startWireCapture(target: string): Promise<WireCapture> {
  const upstream = new URL(target);
  let bodies: Buffer[] = [];
  const server: Server = createServer((req, res) => {
    const forward = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        bodies.push(body);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.end(body);
      });
    });
    forward.on('error', (error) => res.destroy(error));
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    take: () => {
      const taken = bodies;
      bodies = [];
      return taken;
    },
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

/**
 * Parsing what came over the wire, the way any client must: JSON.parse of each
 * body, and base64 decoding of every binary attribute (`{"B": …}`) in it. Milliseconds.
 */
export function parseWire(bodies: readonly Buffer[]): number {
  const start = process.hrtime.bigint();
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const v of value) visit(v);
      return;
    }
    for (const [key, v] of Object.entries(value)) {
      if (key === 'B' && typeof v === 'string') Buffer.from(v, 'base64');
      else visit(v);
    }
  };
  // Only bodies with binary attributes are walked: the others need nothing beyond JSON.parse.
  for (const body of bodies) {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (body.includes('"B":')) visit(parsed);
  }
  return Number(process.hrtime.bigint() - start) / 1e6;
}
