// The configuration each function declares (shared/routes, shared/workers.ts)
// is what its bundle reads: esbuild's metafile lists the shared/config/<concern>.ts
// modules each Lambda carries, and that set must equal the declared concerns
// (plus the implied ones). A group that starts reading a concern without
// declaring it would get no variables or secret from the stack; this fails first.
// And what the stack sets from context is checked by the concerns' own schemas at
// synth, since on AWS no start-up check runs before the first request.
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { esbuildOptions, functionNames, REPO_ROOT } from '../../infra/bundling.js';
import { FleetHealthStack, fleetHealthPropsFromContext } from '../../infra/fleet-health-stack.js';
import { functionConcerns } from '../../infra/local/functions.js';
import { BOOTSTRAP_FUNCTION } from '../../shared/auth/bootstrap-resource.js';
import { CONCERNS, type ConfigConcern } from '../../shared/config/concerns.js';
import { checkSettings } from '../../shared/config/env.js';

const metafiles = new Map<string, Metafile>();

beforeAll(async () => {
  const outdir = await mkdtemp(join(tmpdir(), 'fleet-config-'));
  for (const name of functionNames())
    metafiles.set(name, (await build({ ...esbuildOptions(name, outdir), write: false, metafile: true, minify: false })).metafile);
}, 120_000);

/** The concerns whose module is in the function's bundle: its entry or a chunk it loads. */
function bundledConcerns(name: string): ConfigConcern[] {
  const metafile = metafiles.get(name);
  if (!metafile) throw new Error(`no bundle for ${name}`);
  const paths = Object.values(metafile.outputs).flatMap((output) => Object.entries(output.inputs).filter(([, input]) => input.bytesInOutput > 0));
  return [...new Set(paths.map(([path]) => /shared\/config\/([a-z-]+)\.ts$/.exec(path)?.[1]))].filter(
    (concern): concern is ConfigConcern => concern !== undefined && concern in CONCERNS,
  );
}

// The route groups and workers, and the deploy step, which declares its own (shared/auth/bootstrap-resource.ts).
const functions = [...functionConcerns(), { name: BOOTSTRAP_FUNCTION.name, concerns: [...BOOTSTRAP_FUNCTION.config] as ConfigConcern[] }];

describe('configuration declarations', () => {
  it('covers every function', () => {
    expect(functions.map((f) => f.name).sort()).toEqual(functionNames().sort());
  });

  // worker-functions comes with an invoke grant; the agent worker carries the invoking code of agents/tasks.ts
  // (shared with recompute) without ever calling it, so that one concern may be bundled undeclared.
  it.each(functions)('$name declares exactly the concerns its bundle reads', ({ name, concerns }) => {
    const bundled = bundledConcerns(name).filter((c) => c !== 'worker-functions' || concerns.includes(c));
    expect(bundled.sort()).toEqual([...concerns].sort());
  });

  it('names each concern after its module, so the bundle check can find it', () => {
    for (const [name, settings] of Object.entries(CONCERNS)) expect(settings.concern).toBe(name);
  });
});

// A setting's value is checked where settings are: at `npm start` (checkSettings, infra/local/service.ts)
// and on a cold start's first read, not by the first request that happens to use it.
describe('LLM_PRICING is checked with the settings', () => {
  const refusal = (value: string): string => {
    try {
      checkSettings(['llm-pricing'], { LLM_PRICING: value });
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('LLM_PRICING was accepted');
  };
  const row = (model: string, fields: Record<string, unknown> = {}) => ({ model, input_per_mtok: 1, output_per_mtok: 2, ...fields });

  it.each([
    ['not JSON', '{secret-model-1', /^LLM_PRICING must be a JSON array of \{model, input_per_mtok, output_per_mtok\}/],
    ['not an array', JSON.stringify(row('secret-model-2')), /^LLM_PRICING must be .*: Invalid input: expected array, received object\.$/],
    ['a row without prices', JSON.stringify([{ model: 'secret-model-3' }]), /^LLM_PRICING must be .* \(row 0, input_per_mtok\): /],
    ['a price that is text', JSON.stringify([row('a'), row('secret-model-4', { output_per_mtok: '2' })]), /\(row 1, output_per_mtok\)/],
    ['a negative price', JSON.stringify([row('secret-model-5', { input_per_mtok: -1 })]), /\(row 0, input_per_mtok\)/],
    ['a price beyond 10,000', JSON.stringify([row('secret-model-6', { cached_input_per_mtok: 10_001 })]), /\(row 0, cached_input_per_mtok\)/],
    ['an infinite price', '[{"model":"secret-model-7","input_per_mtok":1e999,"output_per_mtok":1}]', /\(row 0, input_per_mtok\)/],
    ['a model twice', JSON.stringify([row('secret-model-8'), row('secret-model-8')]), /each model at most once\.$/],
    ['more than 500 rows', JSON.stringify(Array.from({ length: 501 }, (_, i) => row(`secret-model-9-${i}`))), /^LLM_PRICING must be /],
    ['a field of its own', JSON.stringify([row('m', { 'secret-field': 1 })]), /\(row 0\): a field that is none of these\.$/],
  ])('refuses %s, naming the variable and never the value', (_, value, message) => {
    const said = refusal(value);
    expect(said).toMatch(message);
    expect(said).not.toMatch(/secret-/);
  });

  it('takes rows with and without cache rates, and no value at all', () => {
    expect(() =>
      checkSettings(['llm-pricing'], { LLM_PRICING: JSON.stringify([row('a'), row('b', { cached_input_per_mtok: 0.5, cache_write_input_per_mtok: 1.25 })]) }),
    ).not.toThrow();
    expect(() => checkSettings(['llm-pricing'], { LLM_PRICING: ' ' })).not.toThrow();
    expect(() => checkSettings(['llm-pricing'], {})).not.toThrow();
  });
});

describe('context values checked at synth', () => {
  const cdkContext = (JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
  /** The stack as `cdk synth -c key=value` builds it (bundling skipped, as in stack.test.ts). */
  const synth = (context: Record<string, string>) => {
    const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], ...context } });
    return new FleetHealthStack(app, 'ContextCheck', fleetHealthPropsFromContext(app));
  };

  it.each([
    [{ sesFromAddress: 'ops.example.com' }, 'context sesFromAddress: SES_FROM_ADDRESS must be an email address.'],
    [{ appUrl: 'fleet.example.com' }, 'context appUrl: APP_URL must be an http(s) URL, e.g. https://fleet.example.com.'],
    [{ corsOrigins: 'https://ops.example.com/' }, /^context corsOrigins: CORS_ORIGINS must be a comma-separated list of origins/],
    [{ corsOrigins: '*' }, /^context stage, corsOrigins: CORS_ORIGINS may not be \* when STAGE is prod/],
  ])('%o fails the synth, naming the context key and its variable', (context, message) => {
    expect(() => synth(context)).toThrow(message);
  });

  it('passes good values (and the CloudFront URL, known only at deploy) to the functions that declare them', () => {
    const stack = synth({ sesFromAddress: 'fleet@example.com', corsOrigins: 'https://ops.example.com,http://localhost:5173' });
    const resources = Template.fromStack(stack).toJSON().Resources as Record<string, { Type: string; Properties: Record<string, any> }>;
    const settings = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.SES_FROM_ADDRESS);
    expect(settings?.Properties.Environment.Variables).toMatchObject({
      SES_FROM_ADDRESS: 'fleet@example.com',
      CORS_ORIGINS: 'https://ops.example.com,http://localhost:5173',
      APP_URL: { 'Fn::Join': expect.any(Array) },
    });
  });
});
