// The console's build: `npm run build` and `npm start` build it (infra/console.ts) into
// dist/web; `npm run dev` serves it with hot reload and sends /api to the running service.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { BUILT_POLICY } from './csp.js';
import { devServerSettings } from './dev-settings.js';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The built console's Content-Security-Policy (csp.ts), a meta tag in index.html, so CloudFront and
 * the local server serve the same one; both also send a header narrowing frame-src to the
 * deployment's BI server. Not in `npm run dev`: Vite's React refresh preamble is an inline script.
 */
const contentSecurityPolicy: Plugin = {
  name: 'content-security-policy',
  apply: 'build',
  transformIndexHtml: () => [{ tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: BUILT_POLICY }, injectTo: 'head-prepend' }],
};

export default defineConfig(async ({ command }) => {
  // Only the dev server reads them: a build ignores a bad one.
  const dev = command === 'serve' ? await devServerSettings() : undefined;
  return {
    root,
    plugins: [react(), contentSecurityPolicy],
    build: {
      outDir: fileURLToPath(new URL('../../dist/web', import.meta.url)),
      emptyOutDir: true,
      // Asset names keep their extensions: CloudFront and the local server treat extension-less paths as client routes.
      assetsDir: 'assets',
      sourcemap: true,
      target: 'es2022',
      reportCompressedSize: false,
    },
    server: dev && { port: dev.port, proxy: { '/api': dev.apiUrl } },
  };
});
