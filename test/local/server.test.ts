// The local server's security headers, as CloudFront's response headers policies add them on AWS
// (test/infra/stack.test.ts checks those): the console's answers carry its CSP, which no page may
// frame (frame-ancestors 'none', X-Frame-Options DENY), and every API answer carries the API's
// policy with the same nosniff, frame and referrer headers. The real route-group handlers, as
// `npm start` loads them, behind the server, with a console build of one page.
import { mkdtemp, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalServer, loadGroupHandlers } from '../../infra/local/server.js';
import { BUILT_POLICY } from '../../infra/web/csp.js';
import { useTestTables } from '../support/dynamo.js';
import { useTestJwtSecret } from '../support/tokens.js';

let server: Server;
let base: string;

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  const webRoot = await mkdtemp(join(tmpdir(), 'fleet-web-'));
  await writeFile(join(webRoot, 'index.html'), '<!doctype html><title>Fleet Health</title>');
  server = createLocalServer({ handlers: await loadGroupHandlers(), webRoot });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((r) => server?.close(() => r()));
});

const headersOf = async (path: string, init?: RequestInit) => {
  const res = await fetch(`${base}${path}`, init);
  await res.arrayBuffer();
  return { status: res.status, headers: res.headers };
};

describe('local server security headers', () => {
  it('sends the console its CSP with frame-ancestors none, X-Frame-Options DENY, nosniff and a referrer policy', async () => {
    for (const path of ['/', '/fleet', '/index.html']) {
      const { status, headers } = await headersOf(path);
      expect(status, path).toBe(200);
      expect(headers.get('content-security-policy'), path).toBe(`${BUILT_POLICY.replace('frame-src *', "frame-src 'none'")}; frame-ancestors 'none'`);
      expect(headers.get('x-frame-options'), path).toBe('DENY');
      expect(headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(headers.get('referrer-policy'), path).toBe('strict-origin-when-cross-origin');
    }
  });

  it('sends every API answer the API policy and the same headers: a route, the 404 fallback, a refused path', async () => {
    for (const [path, expected] of [
      ['/api/health-check', 200],
      ['/api/nope', 404],
      ['/api/%zz', 400],
    ] as const) {
      const { status, headers } = await headersOf(path);
      expect(status, path).toBe(expected);
      expect(headers.get('content-security-policy'), path).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(headers.get('x-frame-options'), path).toBe('DENY');
      expect(headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(headers.get('referrer-policy'), path).toBe('strict-origin-when-cross-origin');
    }
  });
});
