// The proposal listing past its read limit, through the settings handler on DynamoDB Local:
// it lists the newest CHANGES_READ_LIMIT, and its `total` counts every proposal the filter
// matches (a superadmin's: everyone's; anyone else's: their own), not just those listed.
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as settings } from '../../functions/settings.js';
import { batchPut } from '../../shared/db/client.js';
import { CHANGES_READ_LIMIT, type ChangeStatus } from '../../shared/db/config-changes.js';
import { useTestTables } from '../support/dynamo.js';
import { call, type Handler } from '../support/events.js';
import { userToken, useTestJwtSecret } from '../support/tokens.js';

const FLOODER = 'proposal-flooder';
const OTHER = 'proposal-other';
/** The flooder's proposals: past the limit on their own. */
const FLOODED = CHANGES_READ_LIMIT + 60;

/** A stored proposal summary, as a proposal's transaction writes it (the text item is not read by a listing). */
function proposal(n: number, proposedBy: string, status: ChangeStatus) {
  const at = new Date(Date.UTC(2026, 0, 1) + n * 60_000);
  const changeId = `${at.toISOString().replace(/[-:.]/g, '')}-${n.toString(16).padStart(8, '0')}`;
  return {
    pk: 'CHANGES',
    sk: changeId,
    change_id: changeId,
    rule_set: 'risk-rules',
    status,
    proposed_by: proposedBy,
    proposed_at: at.toISOString(),
    base_version: 0,
    reviewed_by: status === 'pending' ? null : 'proposals-super',
    reviewed_at: status === 'pending' ? null : at.toISOString(),
    review_note: status === 'pending' ? null : '',
    applied_version: null,
  };
}

const list = async (token: string, statusFilter = '') => {
  const answer = await call(settings as Handler, {
    method: 'GET',
    path: '/api/settings/config-changes',
    routeKey: 'GET /api/settings/config-changes',
    query: { status_filter: statusFilter },
    headers: { authorization: `Bearer ${token}` },
  });
  expect(answer.statusCode).toBe(200);
  return answer.json as { changes: { change_id: string; proposed_by: string; status: string }[]; total: number };
};

let superadmin: string;
let flooder: string;
let other: string;
const stored: ReturnType<typeof proposal>[] = [];

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  [superadmin, flooder, other] = await Promise.all([userToken('superadmin', 'proposals-super'), userToken('admin', FLOODER), userToken('viewer', OTHER)]);
  // The flooder's (every twentieth pending, the rest rejected: past the limit too), then three of the other user's, newest.
  for (let n = 0; n < FLOODED; n += 1) stored.push(proposal(n, FLOODER, n % 20 === 0 ? 'pending' : 'rejected'));
  for (let n = FLOODED; n < FLOODED + 3; n += 1) stored.push(proposal(n, OTHER, 'pending'));
  await batchPut('rules', stored);
});

describe('GET /api/settings/config-changes past its read limit', () => {
  it("lists a superadmin the newest proposals and counts everyone's in total", async () => {
    const answer = await list(superadmin);
    expect(answer.changes).toHaveLength(CHANGES_READ_LIMIT);
    expect(answer.total).toBe(FLOODED + 3);
    const newest = stored.map((s) => s.change_id).reverse();
    expect(answer.changes.map((c) => c.change_id)).toEqual(newest.slice(0, CHANGES_READ_LIMIT));
  });

  it("counts only a proposer's own, with the status filter applied to the count as to the list", async () => {
    const own = await list(flooder);
    expect(own.changes).toHaveLength(CHANGES_READ_LIMIT);
    expect(own.changes.every((c) => c.proposed_by === FLOODER)).toBe(true);
    expect(own.total).toBe(FLOODED);

    const rejected = stored.filter((s) => s.status === 'rejected').length;
    expect(rejected).toBeGreaterThan(CHANGES_READ_LIMIT);
    const allRejected = await list(superadmin, 'rejected');
    expect(allRejected.changes).toHaveLength(CHANGES_READ_LIMIT);
    expect(allRejected.changes.every((c) => c.status === 'rejected')).toBe(true);
    expect(allRejected.total).toBe(rejected);
  });

  it('below the limit, total is what is listed', async () => {
    const pending = await list(superadmin, 'pending');
    const expected = stored.filter((s) => s.status === 'pending').length;
    expect(expected).toBeLessThan(CHANGES_READ_LIMIT);
    expect(pending.changes).toHaveLength(expected);
    expect(pending.total).toBe(expected);
    const theirs = await list(other);
    expect(theirs.total).toBe(3);
    expect(theirs.changes.map((c) => c.proposed_by)).toEqual([OTHER, OTHER, OTHER]);
  });
});
