// A local HTTP server speaking a BI server's cookieless-embed API 4.0
// (REFERENCE.md): form login → access token; acquire with the embed user (and
// optionally a session reference token to reuse the session); generate_tokens
// → new api/navigation tokens, or session_reference_token_ttl 0 once the
// session has expired. Each acquire is an iframe with tokens of its own: iframes
// (browser tabs) share a session through its reference token, and renewing one
// frame's tokens leaves the others'. Tokens are tied to the browser's User-Agent.
// Records every request and has failure modes, so the real client is tested over the wire.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedEmbedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON or form body, or the raw text. */
  body: unknown;
}

export interface FakeEmbedOptions {
  clientId: string;
  clientSecret: string;
  /** Login token lifetime in seconds (default 3600). */
  loginExpiresIn?: number;
  /** How long mode 'slow' waits before answering. */
  slowMs?: number;
}

/**
 * How calls are answered: 'ok', 'error500', 'error400', 'error429' (rate limited, Retry-After 30), 'slow' (the answer after slowMs), 'garbage'
 * (200, not JSON), 'overlong' (the 'ok' answer with every lifetime 1e15 seconds, 30 million years) or
 * 'oversized' (200 with 2 MB of body, no Content-Length).
 */
export type FakeEmbedMode = 'ok' | 'error500' | 'error400' | 'error429' | 'slow' | 'garbage' | 'overlong' | 'oversized';

/** One iframe's tokens: what its renewals must send, from its browser. */
interface Frame {
  userAgent: string;
  api: string;
  navigation: string;
}

interface Session {
  reference: string;
  externalUserId: string;
  /** Epoch seconds on the fake's clock. */
  expiresAt: number;
  frames: Frame[];
}

export interface FakeEmbed {
  /** The server URL, e.g. http://127.0.0.1:PORT */
  host: string;
  received: ReceivedEmbedRequest[];
  /** How /login is answered. */
  loginMode: FakeEmbedMode;
  /** How acquire and generate_tokens are answered (after authentication). */
  mode: FakeEmbedMode;
  /** Logins that succeeded. */
  logins: number;
  /** Every session reference token handed out. */
  referenceTokens(): string[];
  /** Every token of any kind handed out (login, auth, api, navigation, reference). */
  issuedTokens(): string[];
  /** Moves the fake's clock: sessions expire after their session_length. */
  advance(seconds: number): void;
  /** Invalidates issued login tokens (as a restart of the BI server would). */
  revokeLogins(): void;
  /** Reference tokens acquire refuses with 400 (a session the server no longer knows). */
  refusedReferences: Set<string>;
  /** Holds the next `count` acquires until all of them have arrived, then answers them: callers' acquires overlap for sure. */
  holdAcquires(count: number): void;
  reset(): void;
  close(): Promise<void>;
}

const LOGIN = '/api/4.0/login';
const ACQUIRE = '/api/4.0/embed/cookieless_session/acquire';
const GENERATE = '/api/4.0/embed/cookieless_session/generate_tokens';
export const FAKE_TTLS = { authentication: 300, navigation: 600, api: 600, maxSession: 2_592_000 };

const token = (prefix: string) => `${prefix}-${randomBytes(18).toString('base64url')}`;

export async function startFakeEmbed(options: FakeEmbedOptions): Promise<FakeEmbed> {
  const pending = new Set<NodeJS.Timeout>();
  let held: { count: number; waiting: (() => void)[] } | undefined;
  /** Resolves once the held acquires have all arrived (at once when none are held). */
  const gate = () =>
    new Promise<void>((release) => {
      if (!held) return release();
      held.waiting.push(release);
      if (held.waiting.length < held.count) return;
      const all = held.waiting;
      held = undefined;
      for (const go of all) go();
    });
  const accessTokens = new Set<string>();
  const sessions = new Map<string, Session>();
  const issued: string[] = [];
  // The fake's clock moves only when a test advances it: TTLs it answers never depend on when a second ticks over.
  let clock = Math.floor(Date.now() / 1000);
  const now = () => clock;
  const issue = (prefix: string) => {
    const t = token(prefix);
    issued.push(t);
    return t;
  };

  const state: FakeEmbed = {
    host: '',
    received: [],
    loginMode: 'ok',
    mode: 'ok',
    logins: 0,
    referenceTokens: () => [...sessions.keys()],
    issuedTokens: () => [...issued],
    advance: (seconds) => void (clock += seconds),
    revokeLogins: () => accessTokens.clear(),
    refusedReferences: new Set<string>(),
    holdAcquires: (count) => {
      held = { count, waiting: [] };
    },
    reset: () => {
      held = undefined;
      state.received.length = 0;
      state.loginMode = 'ok';
      state.mode = 'ok';
      state.logins = 0;
      accessTokens.clear();
      sessions.clear();
      clock = Math.floor(Date.now() / 1000);
    },
    close: async () => undefined,
  };

  const answer = (res: ServerResponse, mode: FakeEmbedMode, ok: () => void) => {
    switch (mode) {
      case 'ok':
        return ok();
      case 'error500':
        return reply(res, 500, { message: 'Internal server error', documentation_url: 'https://docs.example.com' });
      case 'error400':
        return reply(res, 400, { message: 'Bad request', documentation_url: 'https://docs.example.com' });
      case 'error429':
        res.setHeader('Retry-After', '30');
        return reply(res, 429, { message: 'Too many requests', documentation_url: 'https://docs.example.com' });
      case 'overlong':
        overlong = true;
        try {
          return ok();
        } finally {
          overlong = false;
        }
      case 'oversized':
        res.writeHead(200, { 'Content-Type': 'application/json' });
        for (let i = 0; i < 32; i++) res.write(' '.repeat(65_536));
        return res.end('{}');
      case 'garbage':
        res.writeHead(200, { 'Content-Type': 'text/html' });
        return res.end('<html><body>Down for maintenance</body></html>');
      case 'slow': {
        const timer = setTimeout(() => {
          pending.delete(timer);
          if (!res.destroyed) ok();
        }, options.slowMs ?? 3_000);
        pending.add(timer);
      }
    }
  };

  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', async () => {
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      const form = req.headers['content-type']?.startsWith('application/x-www-form-urlencoded');
      const body = form ? Object.fromEntries(new URLSearchParams(raw)) : (parseJson(raw) ?? raw);
      state.received.push({ method: req.method ?? '', path, headers: req.headers, body });
      const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;

      if (path === LOGIN) {
        if (req.method !== 'POST') return reply(res, 405, { message: 'Method not allowed' });
        if (!form) return reply(res, 415, { message: 'Unsupported media type' });
        // API 4.0 answers unknown credentials with 404.
        if (fields.client_id !== options.clientId || fields.client_secret !== options.clientSecret)
          return reply(res, 404, { message: 'Not found', documentation_url: 'https://docs.example.com' });
        return answer(res, state.loginMode, () => {
          const access = issue('login');
          accessTokens.add(access);
          state.logins += 1;
          reply(res, 200, { access_token: access, token_type: 'Bearer', expires_in: options.loginExpiresIn ?? 3600 });
        });
      }
      if (path !== ACQUIRE && path !== GENERATE) return reply(res, 404, { message: 'Not found' });
      const auth = /^(?:token|Bearer) (.+)$/.exec(req.headers.authorization ?? '');
      if (!auth || !accessTokens.has(auth[1]!)) return reply(res, 401, { message: 'Requires authentication.', documentation_url: 'https://docs.example.com' });
      if (!req.headers['content-type']?.startsWith('application/json')) return reply(res, 415, { message: 'Unsupported media type' });
      const userAgent = req.headers['user-agent'] ?? '';

      if (path === ACQUIRE) {
        if (req.method !== 'POST') return reply(res, 405, { message: 'Method not allowed' });
        const problem = acquireProblem(fields);
        if (problem) return reply(res, 422, { message: 'Validation Failed', errors: [{ field: problem, code: 'invalid' }] });
        if (typeof fields.session_reference_token === 'string' && state.refusedReferences.has(fields.session_reference_token)) {
          return reply(res, 400, { message: 'Invalid session_reference_token' });
        }
        await gate();
        return answer(res, state.mode, () => {
          const wanted = typeof fields.session_reference_token === 'string' ? sessions.get(fields.session_reference_token) : undefined;
          // A live session of the same user is reused (not extended); otherwise a new one starts.
          let session = wanted && wanted.expiresAt > now() && wanted.externalUserId === fields.external_user_id ? wanted : undefined;
          if (!session) {
            session = {
              reference: issue('ref'),
              externalUserId: fields.external_user_id as string,
              expiresAt: now() + Math.min(Number(fields.session_length), FAKE_TTLS.maxSession),
              frames: [],
            };
            sessions.set(session.reference, session);
          }
          const frame: Frame = { userAgent, api: issue('api'), navigation: issue('nav') };
          session.frames.push(frame);
          reply(res, 200, {
            authentication_token: issue('auth'),
            authentication_token_ttl: FAKE_TTLS.authentication,
            navigation_token: frame.navigation,
            navigation_token_ttl: FAKE_TTLS.navigation,
            api_token: frame.api,
            api_token_ttl: FAKE_TTLS.api,
            session_reference_token: session.reference,
            session_reference_token_ttl: session.expiresAt - now(),
          });
        });
      }

      if (req.method !== 'PUT') return reply(res, 405, { message: 'Method not allowed' });
      return answer(res, state.mode, () => {
        const session = typeof fields.session_reference_token === 'string' ? sessions.get(fields.session_reference_token) : undefined;
        // An expired (or unknown) session is not an error.
        if (!session || session.expiresAt <= now()) {
          return reply(res, 200, {
            navigation_token: null,
            navigation_token_ttl: null,
            api_token: null,
            api_token_ttl: null,
            session_reference_token: null,
            session_reference_token_ttl: 0,
          });
        }
        const frame = session.frames.find((f) => f.api === fields.api_token && f.navigation === fields.navigation_token);
        if (!frame || userAgent !== frame.userAgent) {
          return reply(res, 400, { message: 'Invalid input tokens provided', documentation_url: 'https://docs.example.com' });
        }
        frame.api = issue('api');
        frame.navigation = issue('nav');
        reply(res, 200, {
          navigation_token: frame.navigation,
          navigation_token_ttl: FAKE_TTLS.navigation,
          api_token: frame.api,
          api_token_ttl: FAKE_TTLS.api,
          session_reference_token: session.reference,
          session_reference_token_ttl: session.expiresAt - now(),
        });
      });
    });
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  state.host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((r) => {
      for (const timer of pending) clearTimeout(timer);
      server.close(() => r());
      server.closeAllConnections();
    });
  return state;
}

/** The first invalid field of an acquire body, or undefined. */
function acquireProblem(body: Record<string, unknown>): string | undefined {
  const length = body.session_length;
  if (typeof length !== 'number' || !Number.isInteger(length) || length <= 0 || length > FAKE_TTLS.maxSession) return 'session_length';
  if (typeof body.external_user_id !== 'string' || body.external_user_id === '') return 'external_user_id';
  for (const name of ['first_name', 'last_name'] as const) if (body[name] !== undefined && typeof body[name] !== 'string') return name;
  for (const name of ['permissions', 'models'] as const) {
    const value = body[name];
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) return name;
  }
  if (body.user_attributes !== undefined && (typeof body.user_attributes !== 'object' || body.user_attributes === null)) return 'user_attributes';
  return undefined;
}

/** Set while an 'overlong' answer is built: reply then stretches every lifetime it sends. */
let overlong = false;

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (overlong && typeof body === 'object' && body !== null)
    body = Object.fromEntries(Object.entries(body).map(([key, value]) => [key, /(_ttl|expires_in)$/.test(key) && value ? 1e15 : value]));
  res.writeHead(status, { 'Content-Type': 'application/json;charset=UTF-8' });
  res.end(JSON.stringify(body));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
