// The console's build: `npm run build` (infra/web-build.ts) and `npm start` build it into
// dist/web; `npm run dev` serves it with hot reload and sends /api to the running service.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The built console's Content-Security-Policy, a meta tag in index.html, so CloudFront and the
 * local server serve the same one. Scripts, data and styles come from the console's own origin
 * (the API is on it: /api/*); images too (and data: URLs), so nothing the console renders (AI
 * Markdown above all, whose text a prompt-injected model may write) can make the browser fetch
 * another origin; any frame, since the BI server's dashboards are embedded from EMBED_HOST.
 * Inline styles stay allowed: the editor injects its own. Not in `npm run dev`: Vite's React
 * refresh preamble is an inline script.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  'frame-src *',
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

const contentSecurityPolicy: Plugin = {
  name: 'content-security-policy',
  apply: 'build',
  transformIndexHtml: () => [{ tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: CONTENT_SECURITY_POLICY }, injectTo: 'head-prepend' }],
};

export default defineConfig({
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
  server: {
    port: Number(process.env.WEB_DEV_PORT ?? 5173),
    proxy: { '/api': process.env.API_URL ?? 'http://localhost:3000' },
  },
});
