import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { reactDataGridRowSlots } from './patches/react-data-grid-row-slots.ts';

// The console is built into web/dist, which the server serves at `/` (src/plugins/web-console.ts).
// The grid library is patched while bundled (web/patches/react-data-grid-row-slots.ts); the dev
// server's dependency optimizer gets the same plugin.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [reactDataGridRowSlots(), react()],
  optimizeDeps: { rolldownOptions: { plugins: [reactDataGridRowSlots()] } },
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', sourcemap: false },
  server: { proxy: { '/api': 'http://127.0.0.1:8000', '/api2': 'http://127.0.0.1:8000', '/api-gateway': 'http://127.0.0.1:8000' } },
});
