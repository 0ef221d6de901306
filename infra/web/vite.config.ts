// The console's build: `npm run build` (infra/web-build.ts) and `npm start` build it into
// dist/web; `npm run dev` serves it with hot reload and sends /api to the running service.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  plugins: [react()],
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
