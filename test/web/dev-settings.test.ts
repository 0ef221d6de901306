// `npm run dev`'s settings (infra/web/dev-settings.ts): where the console's dev server sends /api. Without API_URL it
// finds the npm start running on DATA_DIR as the CLIs do, so a service on another PORT (or PORT=0) is reached too.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { devServerSettings } from '../../infra/web/dev-settings.js';

describe("npm run dev's settings", () => {
  it('sends /api to API_URL when set, and refuses one that is no http(s) URL, naming it', async () => {
    expect(await devServerSettings({ API_URL: 'https://fleet.example.com' })).toEqual({ port: 5173, apiUrl: 'https://fleet.example.com' });
    await expect(devServerSettings({ API_URL: 'localhost:3000' })).rejects.toThrow('API_URL must be the http(s) URL of the running service');
    await expect(devServerSettings({ WEB_DEV_PORT: 'abc' })).rejects.toThrow('WEB_DEV_PORT must be a port number');
  });

  it('without API_URL: the npm start running on DATA_DIR, wherever it listens; else localhost:PORT', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fleet-dev-settings-'));
    expect((await devServerSettings({ DATA_DIR: dataDir, PORT: '4711' })).apiUrl).toBe('http://localhost:4711');
    // A running service as the CLIs find one: its runtime file names a live node process (this one).
    const runtime = { pid: process.pid, url: 'http://localhost:39123', dynamoEndpoint: 'http://127.0.0.1:1', tablePrefix: 'dev-' };
    await writeFile(join(dataDir, 'local-service.json'), JSON.stringify(runtime));
    expect(await devServerSettings({ DATA_DIR: dataDir, PORT: '4711' })).toEqual({ port: 5173, apiUrl: 'http://localhost:39123' });
    // One left behind by a service that is gone is not followed.
    await writeFile(join(dataDir, 'local-service.json'), JSON.stringify({ ...runtime, pid: 2 ** 22 + 1 }));
    expect((await devServerSettings({ DATA_DIR: dataDir })).apiUrl).toBe('http://localhost:3000');
    // PORT=0 with none running names no port; settings npm run dev does not read are not its to refuse.
    await expect(devServerSettings({ DATA_DIR: dataDir, PORT: '0' })).rejects.toThrow(`API_URL must be set: no npm start is running on DATA_DIR ${dataDir}`);
    await expect(devServerSettings({ DATA_DIR: dataDir, PORT: 'abc' })).rejects.toThrow('PORT must be a whole number');
    expect((await devServerSettings({ DATA_DIR: dataDir, DEMO_CLUSTERS: 'lots', ADMIN_PASSWORD: 'x' })).apiUrl).toBe('http://localhost:3000');
  });
});
