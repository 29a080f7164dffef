import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The console is built into web/dist, which the server serves at `/` (src/plugins/web-console.ts).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', sourcemap: false },
  server: { proxy: { '/api': 'http://127.0.0.1:8000', '/api2': 'http://127.0.0.1:8000', '/api-gateway': 'http://127.0.0.1:8000' } },
});
