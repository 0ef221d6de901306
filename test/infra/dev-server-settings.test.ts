// `npm run dev` reads WEB_DEV_PORT and API_URL (README's configuration table): a bad value stops it naming the
// variable, as every other setting does. Loaded through Vite itself, as `vite --config infra/web/vite.config.ts` does.
import { join } from 'node:path';
import { loadConfigFromFile } from 'vite';
import { afterEach, describe, expect, it } from 'vitest';

const CONFIG = join(import.meta.dirname, '../../infra/web/vite.config.ts');
const saved = { WEB_DEV_PORT: process.env.WEB_DEV_PORT, API_URL: process.env.API_URL };
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

const serve = (env: Record<string, string | undefined>) => {
  Object.assign(process.env, env);
  return loadConfigFromFile({ command: 'serve', mode: 'development' }, CONFIG, undefined, 'silent');
};

describe('npm run dev settings', () => {
  it('takes the documented defaults, and blank as unset', async () => {
    delete process.env.WEB_DEV_PORT;
    delete process.env.API_URL;
    expect((await serve({}))?.config.server).toEqual({ port: 5173, proxy: { '/api': 'http://localhost:3000' } });
    expect((await serve({ WEB_DEV_PORT: ' ', API_URL: '' }))?.config.server).toEqual({ port: 5173, proxy: { '/api': 'http://localhost:3000' } });
    expect((await serve({ WEB_DEV_PORT: '3475', API_URL: 'http://localhost:3470' }))?.config.server).toEqual({
      port: 3475,
      proxy: { '/api': 'http://localhost:3470' },
    });
  });

  it.each([
    ['WEB_DEV_PORT', 'abc'],
    ['WEB_DEV_PORT', '70000'],
    ['WEB_DEV_PORT', '-1'],
    ['API_URL', 'notaurl'],
    ['API_URL', 'ftp://localhost:3000'],
  ])('refuses %s=%s naming it', async (name, value) => {
    await expect(serve({ [name]: value })).rejects.toThrow(new RegExp(`^${name} must be`));
  });

  it('does not stop a build, which has no dev server', async () => {
    process.env.WEB_DEV_PORT = 'abc';
    await expect(loadConfigFromFile({ command: 'build', mode: 'production' }, CONFIG, undefined, 'silent')).resolves.toBeTruthy();
  });
});
