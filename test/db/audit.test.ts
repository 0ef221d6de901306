import { beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_READ_LIMIT, listAudit, scrubDetail, writeAudit } from '../../shared/db/audit.js';
import { batchPut } from '../../shared/db/client.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
});

describe('audit log', () => {
  it('drops anything that could carry a credential, at any depth', () => {
    expect(
      scrubDetail({
        role: 'admin',
        password: 'x',
        new_password: 'x',
        access_token: 'x',
        activation_token: 'x',
        password_hash: 'x',
        Authorization: 'x',
        api_key: 'x',
        before: { role: 'viewer', secret: 'x' },
        list: [{ token: 'x', ok: 1 }],
      }),
    ).toEqual({ role: 'admin', before: { role: 'viewer' }, list: [{ ok: 1 }] });
  });

  it('stores scrubbed entries and lists them newest first, by action, at most the newest 500', async () => {
    await writeAudit(
      { actor: 'ann', role: 'admin', action: 'invite', target: 'bo@example.com', detail: { role: 'viewer', activation_token: 'secret' } },
      new Date('2026-11-01T10:00:00Z'),
    );
    await writeAudit({ actor: 'ann', role: 'admin', action: 'login', detail: {} }, new Date('2026-11-01T11:00:00Z'));
    const entries = await listAudit();
    expect(entries.map((e) => e.action)).toEqual(['login', 'invite']);
    expect(entries[1]!.detail).toEqual({ role: 'viewer' });
    expect((await listAudit('invite')).map((e) => e.target)).toEqual(['bo@example.com']);

    const many = Array.from({ length: AUDIT_READ_LIMIT + 20 }, (_, i) => {
      const sk = `2026-10-01T00:00:${String(i).padStart(4, '0')}#${i}`;
      return {
        pk: 'AUDIT',
        sk,
        gsi1pk: 'ACTION#logout',
        gsi1sk: sk,
        id: String(i),
        at: sk,
        actor: 'x',
        role: null,
        action: 'logout',
        target: null,
        detail: {},
        ip: null,
        user_agent: null,
      };
    });
    await batchPut('audit', many);
    expect(await listAudit()).toHaveLength(AUDIT_READ_LIMIT);
    expect((await listAudit())[0]!.action).toBe('login');
  });
});
