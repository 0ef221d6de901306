// The settings of `npm run dev` (Vite's dev server for the console), checked as every other setting is: a bad value
// stops it with a line naming the variable. Unchecked, WEB_DEV_PORT=abc was Vite's "No available ports found between
// NaN and 65535", and an API_URL that is no URL started the server, whose every /api request then failed.

export interface DevServerSettings {
  /** WEB_DEV_PORT: the dev server's port (default 5173). */
  port: number;
  /** API_URL: where it sends /api (default the running `npm start`, http://localhost:3000). */
  apiUrl: string;
}

/** Trimmed, and blank as unset, as every setting is read (shared/config/env.ts `envValue`). */
const settingText = (value: string | undefined): string | undefined => value?.trim() || undefined;

export function devServerSettings(env: NodeJS.ProcessEnv = process.env): DevServerSettings {
  const portText = settingText(env.WEB_DEV_PORT);
  const port = portText === undefined ? 5173 : Number(portText);
  if (!/^\d+$/.test(portText ?? '5173') || port < 1 || port > 65_535) {
    throw new Error('WEB_DEV_PORT must be a port number from 1 to 65535.');
  }
  const apiUrl = settingText(env.API_URL) ?? 'http://localhost:3000';
  let url: URL | undefined;
  try {
    url = new URL(apiUrl);
  } catch {
    // said below
  }
  if (!url || !['http:', 'https:'].includes(url.protocol)) {
    throw new Error('API_URL must be the http(s) URL of the running service, e.g. http://localhost:3000.');
  }
  return { port, apiUrl };
}
