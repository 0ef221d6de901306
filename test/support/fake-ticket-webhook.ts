// A local HTTP server standing in for a ticket webhook: it takes the JSON the
// webhook provider posts (optionally behind a bearer token) and answers
// 201 {key, url}, so the real provider is tested over the wire.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhookRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
}

export interface FakeTicketWebhook {
  /** The webhook URL, e.g. http://127.0.0.1:PORT/hooks/tickets */
  url: string;
  /** Every request, including refused ones. */
  received: ReceivedWebhookRequest[];
  /**
   * How an authorized, valid request is answered: 'ok' (201 {key, url}), 'error500',
   * 'invalid' (200 with an empty key and a javascript: URL), 'spoofing' (201 with a key holding a right-to-left
   * override and a line break, which the PATCH route refuses), 'twoKeys' (201 with two keys run together, which it
   * refuses too), 'garbage' (200, not JSON) or 'slow' (201 after slowMs).
   */
  /** `seeOther`: a 303 to the ticket made (POST-redirect-GET); `moved`: a 301, as a wrong (old) URL answers. */
  /** `rateLimited`: a 429 with Retry-After: 12. */
  mode: 'ok' | 'error500' | 'rateLimited' | 'invalid' | 'spoofing' | 'twoKeys' | 'garbage' | 'slow' | 'oversized' | 'seeOther' | 'moved';
  close(): Promise<void>;
}

const HOOK_PATH = '/hooks/tickets';
const FIELDS = ['issue_id', 'summary', 'description', 'link', 'severity'] as const;

export async function startFakeTicketWebhook(options: { token?: string; slowMs?: number } = {}): Promise<FakeTicketWebhook> {
  const pending = new Set<NodeJS.Timeout>();
  let tickets = 0;
  const state: FakeTicketWebhook = { url: '', received: [], mode: 'ok', close: async () => undefined };

  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      const body = parseJson(raw) as Record<string, unknown> | undefined;
      state.received.push({ method: req.method ?? '', path, headers: req.headers, body: body ?? raw });

      if (path !== HOOK_PATH) return reply(res, 404, { error: 'not found' });
      if (req.method !== 'POST') return reply(res, 405, { error: 'method not allowed' });
      if (options.token && req.headers.authorization !== `Bearer ${options.token}`) return reply(res, 401, { error: 'unauthorized' });
      const valid = FIELDS.every((field) => typeof body?.[field] === 'string') && Array.isArray(body?.labels);
      if (!valid) return reply(res, 400, { error: 'expected {issue_id, summary, description, link, labels, severity}' });

      const created = () => {
        tickets += 1;
        reply(res, 201, { key: `HOOK-${tickets}`, url: `https://tickets.example.com/browse/HOOK-${tickets}` });
      };
      switch (state.mode) {
        case 'ok':
          return created();
        case 'seeOther':
          res.writeHead(303, { Location: `${state.url}/tickets/HOOK-303` });
          return res.end();
        case 'moved':
          res.writeHead(301, { Location: `${state.url}/v2` });
          return res.end();
        case 'error500':
          return reply(res, 500, { error: 'internal error' });
        case 'rateLimited':
          res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '12' });
          return res.end(JSON.stringify({ error: 'too many requests' }));
        case 'invalid':
          return reply(res, 200, { key: '', url: 'javascript:alert(1)' });
        case 'spoofing':
          return reply(res, 201, { key: 'HOOK-7\u202E\nHOOK-1', url: 'https://tickets.example.com/browse/HOOK-7' });
        case 'twoKeys':
          return reply(res, 201, { key: 'HOOK-7 HOOK-8', url: 'https://tickets.example.com/browse/HOOK-7' });
        case 'oversized':
          // 2 MB in 64 KB chunks without a Content-Length: only counting what is read can refuse it.
          res.writeHead(201, { 'Content-Type': 'application/json' });
          for (let i = 0; i < 32; i++) res.write(' '.repeat(65_536));
          return res.end('{}');
        case 'garbage':
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          return res.end('OK');
        case 'slow': {
          const timer = setTimeout(() => {
            pending.delete(timer);
            if (!res.destroyed) created();
          }, options.slowMs ?? 3_000);
          pending.add(timer);
        }
      }
    });
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${HOOK_PATH}`;
  state.close = () =>
    new Promise<void>((r) => {
      for (const timer of pending) clearTimeout(timer);
      server.close(() => r());
      server.closeAllConnections();
    });
  return state;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
