// A proxy in front of DynamoDB Local through which a test sees every request as it goes
// over the wire (the operation, its JSON input), counts them, or answers one itself the
// way DynamoDB answers an error (a denied write, a cancelled transaction). Nothing of ours
// is replaced: the service's own client signs, sends, retries and reads the answers.
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as DynamoDB receives it: `GetItem`, `TransactWriteItems`, …; its input in wire form (`{ "pk": { "S": "…" } }`). */
export interface WireRequest {
  operation: string;
  /** Whichever fields the operation has (a test reads what it looks for). */
  input: Record<string, any>;
}

/** An error answer in DynamoDB's form: `type` as in `__type` (`AccessDeniedException`), 400 unless said. */
export interface ErrorAnswer {
  type: string;
  message: string;
  status?: number;
  fields?: Record<string, unknown>;
}

/**
 * Sees a request; an ErrorAnswer it returns answers it instead of DynamoDB, `{ reply }` answers it with that 200
 * body (a batch's UnprocessedItems), 'lose-answer' lets DynamoDB do it but resets the connection before its answer
 * arrives, and `{ hold }` sends it on only once `hold` has settled (another write lands first: a race, made to happen).
 */
export type Watcher = (request: WireRequest) => ErrorAnswer | { reply: Record<string, unknown> } | 'lose-answer' | { hold: Promise<unknown> } | undefined;

export interface DynamoProxy {
  readonly endpoint: string;
  /** Calls `watcher` on every request until the returned function is called; an ErrorAnswer it returns answers that request instead of DynamoDB. */
  watch(watcher: Watcher): () => void;
  /** Calls `observer` on every request (to count them) until the returned function is called. */
  observe(observer: (request: WireRequest) => void): () => void;
  close(): Promise<void>;
}

export async function startDynamoProxy(target: string): Promise<DynamoProxy> {
  const upstream = new URL(target);
  const watchers = new Set<Watcher>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const operation =
        String(req.headers['x-amz-target'] ?? '')
          .split('.')
          .pop() ?? '';
      let answer: ReturnType<Watcher>;
      let input: WireRequest['input'] | undefined;
      try {
        input = JSON.parse(body.toString('utf8')) as WireRequest['input'];
      } catch {
        // Not JSON: DynamoDB Local answers it.
      }
      // Every watcher sees every request; the first answer given is the one sent. A watcher that throws (a failed
      // expectation) is not swallowed: the request is answered 500 at once (no client waits out its timeout), and
      // the error is thrown again outside, an unhandled error that fails the test run.
      if (input !== undefined) {
        try {
          for (const watcher of watchers) {
            const given = watcher({ operation, input });
            answer ??= given;
          }
        } catch (error) {
          res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
          res.end(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'a test watcher failed' }));
          setImmediate(() => {
            throw error;
          });
          return;
        }
      }
      if (answer === 'lose-answer') {
        forward(upstream, req.method ?? 'POST', req.url ?? '/', req.headers, body, res, true);
        return;
      }
      if (answer && 'hold' in answer) {
        const send = () => forward(upstream, req.method ?? 'POST', req.url ?? '/', req.headers, body, res);
        answer.hold.then(send, send);
        return;
      }
      if (answer && 'reply' in answer) {
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify(answer.reply));
        return;
      }
      if (answer) {
        res.writeHead(answer.status ?? 400, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${answer.type}`, message: answer.message, ...answer.fields }));
        return;
      }
      forward(upstream, req.method ?? 'POST', req.url ?? '/', req.headers, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref(); // A test file that never closes it still ends.
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    watch(watcher) {
      watchers.add(watcher);
      return () => watchers.delete(watcher);
    },
    observe(observer) {
      const watcher: Watcher = (request) => {
        observer(request);
        return undefined;
      };
      watchers.add(watcher);
      return () => watchers.delete(watcher);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function forward(
  upstream: URL,
  method: string,
  path: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
  res: import('node:http').ServerResponse,
  lose = false,
): void {
  const out = request({ hostname: upstream.hostname, port: upstream.port, method, path, headers: { ...headers, host: upstream.host } }, (answer) => {
    if (lose) {
      answer.resume();
      answer.on('end', () => res.socket?.destroy());
      return;
    }
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  out.on('error', () => res.destroy());
  out.end(body);
}

/**
 * Holds the first request `matches` picks until `meanwhile`, started right then, has run: the other
 * side of a race lands first, with no timing. `done` answers what `meanwhile` did (throws what it
 * threw), and fails the test if no such request was sent.
 */
export function whileHeld(proxy: DynamoProxy, matches: (request: WireRequest) => boolean, meanwhile: () => Promise<unknown>) {
  let ran: Promise<unknown> | undefined;
  const stop = proxy.watch((request) => {
    if (ran || !matches(request)) return undefined;
    ran = meanwhile();
    return { hold: ran };
  });
  return {
    done: async () => {
      stop();
      if (!ran) throw new Error('the held request was never sent');
      return ran;
    },
  };
}

/** The table a request names (a batch: its first). */
export const tableOf = (request: WireRequest): string => String(request.input.TableName ?? Object.keys(request.input.RequestItems ?? {})[0] ?? '');

/** What `work` answers, and the requests it sent on the way: those `matches` picks, or every one. */
export async function requestsOf<T>(
  proxy: DynamoProxy,
  work: () => Promise<T>,
  matches: (request: WireRequest) => boolean = () => true,
): Promise<{ result: T; requests: WireRequest[] }> {
  const requests: WireRequest[] = [];
  const stop = proxy.observe((request) => {
    if (matches(request)) requests.push(request);
  });
  try {
    return { result: await work(), requests };
  } finally {
    stop();
  }
}
