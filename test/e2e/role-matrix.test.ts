// Walks EVERY route of the route table through the local server with no token,
// and with a viewer, an admin and a superadmin token, and checks each answer
// against DESIGN §5 (encoded here from the design, independently of the table).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../shared/auth/roles.js';
import { routeKey } from '../../shared/http/route.js';
import { allRoutes } from '../../shared/routes/all-groups.js';
import { dropFleetViewCache } from '../../shared/scoring/fleet-view.js';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';

type Who = 'public' | Role[];
const ALL: Role[] = ['superadmin', 'admin', 'viewer'];
const ADMIN_UP: Role[] = ['superadmin', 'admin'];
const SUPER: Role[] = ['superadmin'];

/** DESIGN §5, row by row. */
function expectedAccess(key: string): Who {
  if (['GET /api/health-check', 'GET /api/openapi.json', 'POST /api/auth/login', 'POST /api/auth/activate'].includes(key)) return 'public';
  if (key.includes(' /api/llm-usage/')) return SUPER; // llm-usage
  if (key === 'POST /api/settings/config-changes/{change_id}/review' || key === 'PUT /api/settings/general') return SUPER; // review, general settings
  if (key === 'PATCH /api/settings/users/{email}' || key === 'DELETE /api/settings/users/{email}') return SUPER; // change role / activate / delete
  if (key === 'POST /api/settings/users/{email}/password-reset') return SUPER; // beyond the contract: a password reset, as a user change
  if (key.startsWith('PATCH /api/issues/') || key.startsWith('PATCH /api/ai-issues/') || key.endsWith('/create-ticket')) return ADMIN_UP; // triage, tickets
  if (/^POST \/api\/(fleet|health)\/refresh$|^POST \/api\/settings\/recompute/.test(key) || key === 'POST /api/patrol/trigger') return ADMIN_UP; // refresh/recompute, patrol
  if (/^GET \/api\/((fleet|health)\/refresh|settings\/recompute(-risk)?)\/\{refresh_id\}$/.test(key)) return ADMIN_UP; // issue 21 §2: following a refresh
  if (['GET /api/settings/users', 'GET /api/settings/audit', 'POST /api/settings/users/invite'].includes(key)) return ADMIN_UP; // users, audit, invite
  if (key === 'GET /api/issues/users' || key === 'GET /api/ai-issues/users') return ADMIN_UP; // list users: the assignable ones, with emails and roles
  if (key.startsWith('POST /api/ingest/')) return ADMIN_UP; // ingest: admin JWT (or the static ingest token)
  if (key === 'GET /api/metrics') return ADMIN_UP; // issue 20 §6: admin JWT (or the static scrape token); it carries the LLM cost
  if (key.startsWith('GET /api/metric-sources/') || key.startsWith('POST /api/metric-sources/')) return ADMIN_UP; // issue 20 §5: the puller's source and errors, pull now
  return ALL; // dashboards, chat, embed, rule reads and proposals, own session
}

let service: LocalService;

beforeAll(async () => {
  service = await startTestService({ adminPassword: 'matrix-admin-password' });
});

afterAll(async () => {
  await service?.stop();
});

describe('role matrix (DESIGN §5) through the local server', () => {
  it('answers every route exactly as the matrix says: 401 without a token, 403 for roles not allowed', async () => {
    const rows: string[] = [];
    for (const { route } of allRoutes()) {
      if (route.method === 'ANY') continue;
      const key = routeKey(route);
      const access = expectedAccess(key);
      const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'email' ? 'nobody@example.com' : 'sample-id'));
      for (const who of ['none', ...ALL] as const) {
        const token = who === 'none' ? undefined : await userToken(who, `matrix-${who}`); // fresh: logout revokes
        // Each request computes the fleet view in its own group, as a Lambda with a cold cache does: in one
        // process a view another group cached would hide a table this group reads but does not declare.
        dropFleetViewCache();
        const res = await fetch(`${service.url}${path}`, {
          method: route.method,
          headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), 'Content-Type': 'application/json' },
          body: route.body ? '{}' : undefined,
        });
        await res.arrayBuffer();
        const allowed = access === 'public' || (who !== 'none' && access.includes(who));
        // Allowed: neither refused nor a 500 (a table the group does not declare is one, as on AWS: shared/db/access.ts).
        const ok = allowed ? ![401, 403, 500].includes(res.status) : res.status === (who === 'none' ? 401 : 403);
        if (!ok) rows.push(`${key} as ${who}: got ${res.status}, expected ${allowed ? 'allowed, not a 500' : who === 'none' ? 401 : 403}`);
      }
    }
    expect(rows).toEqual([]);
  }, 120_000);
});
