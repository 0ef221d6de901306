// A wrong LLM_PRICING (not JSON, not an array, a row that is no price) through the llm-usage
// handler: a 503 problem naming the variable and the row, never echoing what was set, as a wrong
// provider setting is; not a bare 500 "Internal error" that leaves the operator guessing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/llm-usage.js';
import { useTestTables } from '../support/dynamo.js';
import { call, type Handler } from '../support/events.js';
import { userToken, useTestJwtSecret } from '../support/tokens.js';

let token: string;

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  token = await userToken('superadmin');
});
afterAll(() => {
  delete process.env.LLM_PRICING;
});

const get = (route: 'pricing' | 'summary' | 'by-model') =>
  call(handler as Handler, {
    method: 'GET',
    path: `/api/llm-usage/${route}`,
    routeKey: `GET /api/llm-usage/${route}`,
    headers: { authorization: `Bearer ${token}` },
  });

describe('a wrong LLM_PRICING', () => {
  it.each([
    ['a row without prices', '[{"model":"secret-model-name-1"}]', /LLM_PRICING.*\(row 0, input_per_mtok\)/],
    [
      'a price that is a string',
      '[{"model":"m","input_per_mtok":1,"output_per_mtok":1},{"model":"m2","input_per_mtok":"1.5","output_per_mtok":2}]',
      /LLM_PRICING.*\(row 1, input_per_mtok\)/,
    ],
    ['not JSON', '{secret-model-name-2', /LLM_PRICING/],
    ['not an array', '{"model":"secret-model-name-3"}', /LLM_PRICING/],
  ])('%s is a 503 naming the variable on the routes that price (pricing, summary), never echoing the value', async (_, value, detail) => {
    process.env.LLM_PRICING = value;
    for (const route of ['pricing', 'summary'] as const) {
      const res = await get(route);
      expect(res.statusCode, route).toBe(503);
      expect(res.headers?.['Content-Type'] ?? res.headers?.['content-type']).toMatch(/application\/problem\+json/);
      expect(res.json!.detail).toMatch(detail);
      expect(res.body).not.toMatch(/secret-model-name/);
    }
  });

  it('mended, the routes answer again', async () => {
    process.env.LLM_PRICING = '[{"model":"local-llama","input_per_mtok":0,"output_per_mtok":0}]';
    const res = await get('pricing');
    expect(res.statusCode).toBe(200);
    expect(res.json!.pricing).toContainEqual({ model: 'local-llama', input_per_mtok: 0, output_per_mtok: 0 });
    expect((await get('summary')).statusCode).toBe(200);
  });

  it.each([
    [
      'a model twice',
      '[{"model":"m","input_per_mtok":1,"output_per_mtok":1},{"model":"m","input_per_mtok":2,"output_per_mtok":2}]',
      /LLM_PRICING.*each model at most once/,
    ],
    ['a price of Infinity (1e999)', '[{"model":"m","input_per_mtok":1e999,"output_per_mtok":1}]', /LLM_PRICING.*\(row 0, input_per_mtok\)/],
    ['a field that is no price', '[{"model":"m","input_per_mtok":1,"output_per_mtok":1,"secret-field-name":1}]', /LLM_PRICING.*\(row 0\)/],
  ])('%s is a 503 too, never echoing the value', async (_, value, detail) => {
    process.env.LLM_PRICING = value;
    const res = await get('pricing');
    expect(res.statusCode).toBe(503);
    expect(res.json!.detail).toMatch(detail);
    expect(res.body).not.toMatch(/secret-field-name/);
  });
});

describe('cache rates in LLM_PRICING', () => {
  it("are taken, and the price list answers the contract's row (model, input_per_mtok, output_per_mtok)", async () => {
    process.env.LLM_PRICING = JSON.stringify([
      { model: 'local-llama', input_per_mtok: 0.5, output_per_mtok: 1, cached_input_per_mtok: 0.05, cache_write_input_per_mtok: 0.625 },
    ]);
    const res = await get('pricing');
    expect(res.statusCode).toBe(200);
    expect(res.json!.pricing).toContainEqual({ model: 'local-llama', input_per_mtok: 0.5, output_per_mtok: 1 });
    expect((await get('summary')).statusCode).toBe(200);
  });
});
