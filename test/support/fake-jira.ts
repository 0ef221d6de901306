// A local HTTP server speaking Jira Cloud's REST v3 "create issue" (Basic auth,
// ADF description, 201 {id, key, self}; 400/401 with Jira's error body), so the
// real Jira provider is tested over the wire.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

export interface ReceivedJiraRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
}

export interface FakeJiraOptions {
  projectKey: string;
  email: string;
  apiToken: string;
  /** How long mode 'slow' waits before answering (beyond the provider's timeout in tests). */
  slowMs?: number;
}

export interface FakeJira {
  /** The site URL, e.g. http://127.0.0.1:PORT */
  baseUrl: string;
  /** Every request, including refused ones. */
  received: ReceivedJiraRequest[];
  /**
   * How an authenticated, valid request is answered: 'ok' (201), 'error500', 'slow' (201 after slowMs, the issue made
   * only if the client still waits), 'late' (the issue made at once, its 201 after slowMs: a ticket that exists after
   * the client's timeout) or 'garbage' (200, not JSON).
   */
  /** `redirect`: a site that sends the POST to its login page, as a wrong base URL (or a proxy in front) does. */
  /** `rateLimited`: Jira Cloud's rate limit, a 429 before anything is made, with `Retry-After: retryAfter` when set. */
  mode: 'ok' | 'error500' | 'slow' | 'late' | 'garbage' | 'oversized' | 'redirect' | 'rateLimited';
  /** The Retry-After (seconds) of mode 'rateLimited'; undefined: none sent. */
  retryAfter?: string;
  /** Every issue made, with its labels, answered or not. */
  created: { key: string; labels: string[] }[];
  close(): Promise<void>;
}

const ISSUE_PATH = '/rest/api/3/issue';

export async function startFakeJira(options: FakeJiraOptions): Promise<FakeJira> {
  const expectedAuthorization = `Basic ${Buffer.from(`${options.email}:${options.apiToken}`).toString('base64')}`;
  const pending = new Set<NodeJS.Timeout>();
  let issues = 0;
  const state: FakeJira = { baseUrl: '', received: [], mode: 'ok', created: [], close: async () => undefined };

  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      const body = parseJson(raw) ?? raw;
      state.received.push({ method: req.method ?? '', path, headers: req.headers, body });

      if (path !== ISSUE_PATH) return reply(res, 404, { errorMessages: ['Not found'], errors: {} });
      if (req.method !== 'POST') return reply(res, 405, { errorMessages: ['Method not allowed'], errors: {} });
      if (req.headers.authorization !== expectedAuthorization) {
        return reply(res, 401, { errorMessages: ['You are not authenticated. Authentication required to perform this operation.'], errors: {} });
      }
      if (!req.headers['content-type']?.startsWith('application/json')) return reply(res, 415, { errorMessages: ['Unsupported media type'], errors: {} });
      const errors = fieldErrors(body, options.projectKey);
      if (Object.keys(errors).length > 0) return reply(res, 400, { errorMessages: [], errors });

      const make = () => {
        issues += 1;
        const id = String(10_000 + issues);
        const key = `${options.projectKey}-${issues}`;
        const labels = ((body as { fields?: { labels?: string[] } }).fields?.labels ?? []).slice();
        state.created.push({ key, labels });
        return { id, key, self: `${state.baseUrl}${ISSUE_PATH}/${id}` };
      };
      const created = () => reply(res, 201, make());
      const later = (answer: () => void) => {
        const timer = setTimeout(() => {
          pending.delete(timer);
          if (!res.destroyed) answer();
        }, options.slowMs ?? 3_000);
        pending.add(timer);
      };
      switch (state.mode) {
        case 'ok':
          return created();
        case 'error500':
          return reply(res, 500, { errorMessages: ['Internal server error'], errors: {} });
        case 'rateLimited':
          res.writeHead(429, { 'Content-Type': 'application/json;charset=UTF-8', ...(state.retryAfter ? { 'Retry-After': state.retryAfter } : {}) });
          return res.end(JSON.stringify({ errorMessages: ['Rate limit exceeded.'], errors: {} }));
        case 'redirect':
          res.writeHead(302, { Location: `${state.baseUrl}/login.jsp?os_destination=%2Frest%2Fapi%2F3%2Fissue` });
          return res.end();
        case 'oversized':
          // 2 MB in 64 KB chunks without a Content-Length: only counting what is read can refuse it.
          res.writeHead(201, { 'Content-Type': 'application/json' });
          for (let i = 0; i < 32; i++) res.write(' '.repeat(65_536));
          return res.end('{}');
        case 'garbage':
          res.writeHead(200, { 'Content-Type': 'text/html' });
          return res.end('<html><body>Down for maintenance</body></html>');
        case 'slow':
          return later(created);
        case 'late': {
          const issue = make();
          return later(() => reply(res, 201, issue));
        }
      }
    });
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((r) => {
      for (const timer of pending) clearTimeout(timer);
      server.close(() => r());
      server.closeAllConnections();
    });
  return state;
}

/** Jira's field errors for the create-issue body, keyed by field (empty when valid). */
function fieldErrors(body: unknown, projectKey: string): Record<string, string> {
  const fields = (body as { fields?: Record<string, unknown> } | undefined)?.fields ?? {};
  const errors: Record<string, string> = {};
  const project = fields.project as { key?: unknown } | undefined;
  if (project?.key !== projectKey) errors.project = 'Specify a valid project ID or key';
  const summary = fields.summary;
  if (typeof summary !== 'string' || summary.trim() === '') errors.summary = 'You must specify a summary of the issue.';
  else if (summary.length > 255) errors.summary = 'Summary must be less than 255 characters.';
  else if (/[\r\n]/.test(summary)) errors.summary = 'The summary is invalid because it contains newline characters.';
  const labels = fields.labels;
  if (labels !== undefined && (!Array.isArray(labels) || labels.some((l) => typeof l !== 'string' || /\s/.test(l) || l.length > 255)))
    errors.labels = 'The label contains spaces which is invalid.';
  const issueType = fields.issuetype as { name?: unknown } | undefined;
  if (typeof issueType?.name !== 'string' || issueType.name === '') errors.issuetype = 'Specify an issue type';
  const description = fields.description as { type?: unknown; version?: unknown; content?: unknown } | undefined;
  if (description?.type !== 'doc' || description.version !== 1 || !Array.isArray(description.content) || !description.content.every(isAdfNode)) {
    errors.description = 'Operation value must be an Atlassian Document (see the Atlassian Document Format)';
  }
  if (fields.labels !== undefined) {
    const labels = Array.isArray(fields.labels) ? fields.labels : [fields.labels];
    const bad = labels.find((label) => typeof label !== 'string' || label === '' || /\s/.test(label));
    if (bad !== undefined) errors.labels = `The label '${String(bad)}' contains spaces which is invalid.`;
  }
  return errors;
}

/** The node types our provider emits; text nodes must be non-empty, links need an href. */
function isAdfNode(node: unknown): boolean {
  const n = node as { type?: unknown; text?: unknown; content?: unknown; marks?: unknown };
  switch (n?.type) {
    case 'paragraph':
    case 'bulletList':
    case 'listItem':
      return Array.isArray(n.content) && n.content.every(isAdfNode);
    case 'hardBreak':
      return true;
    case 'text':
      return (
        typeof n.text === 'string' &&
        n.text !== '' &&
        (n.marks === undefined ||
          (Array.isArray(n.marks) &&
            n.marks.every((m: { type?: unknown; attrs?: { href?: unknown } }) => m.type === 'link' && typeof m.attrs?.href === 'string')))
      );
    default:
      return false;
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
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

const TICKET_SETTINGS = ['TICKET_PROVIDER', 'TICKET_BASE_URL', 'TICKET_PROJECT_KEY', 'TICKET_USER_EMAIL', 'TICKET_API_TOKEN'];

/**
 * For a test file: a fake Jira (project OPS) that is the service's ticket provider, its TICKET_* settings set
 * in beforeAll; closed and the settings removed in afterAll.
 */
export function useFakeJiraTickets(): () => FakeJira {
  const options = { projectKey: 'OPS', email: 'bot@example.com', apiToken: 'jira-token' };
  let jira: FakeJira | undefined;
  beforeAll(async () => {
    jira = await startFakeJira(options);
    Object.assign(process.env, {
      TICKET_PROVIDER: 'jira',
      TICKET_BASE_URL: jira.baseUrl,
      TICKET_PROJECT_KEY: options.projectKey,
      TICKET_USER_EMAIL: options.email,
      TICKET_API_TOKEN: options.apiToken,
    });
  });
  afterAll(async () => {
    for (const name of TICKET_SETTINGS) delete process.env[name];
    await jira?.close();
  });
  return () => {
    if (!jira) throw new Error('the fake Jira starts in beforeAll');
    return jira;
  };
}
