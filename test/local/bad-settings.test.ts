// `npm start` and `npm run invoke` (applyLocalEnvironment → checkSettings) validate every concern a
// function declares before anything runs: a wrong LLM_PRICING stops the start naming the variable
// and the row, never its value, instead of a 503 later from GET /api/metrics (the scraper), chat and
// the workers' model calls.
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { applyLocalEnvironment } from '../../infra/local/service.js';

let dataDir: string;
/** As `npm start` on this data folder and the tests' DynamoDB Local. */
const applyLocal = () => applyLocalEnvironment({ dataDir, dynamoEndpoint: inject('dynamoEndpoint'), tablePrefix: `t${randomBytes(4).toString('hex')}-` });

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'fleet-local-pricing-'));
});
afterAll(() => {
  delete process.env.LLM_PRICING;
});

describe('the local service with a wrong LLM_PRICING', () => {
  it('refuses to start, naming the variable and the row, never the value; mended, it starts', async () => {
    process.env.LLM_PRICING = JSON.stringify([{ model: 'secret-model-name', input_per_mtok: 1 }]);
    const refused = await applyLocal().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/^LLM_PRICING must be a JSON array of .* \(row 0, output_per_mtok\): /);
    expect((refused as Error).message).not.toContain('secret-model-name');

    process.env.LLM_PRICING = JSON.stringify([{ model: 'local-llama', input_per_mtok: 0, output_per_mtok: 0, cached_input_per_mtok: 0 }]);
    await expect(applyLocal()).resolves.toBeUndefined();
  });
});
