/**
 * Build of the web client: `vite build --config web/vite.config.ts` writes static files to
 * web/dist, which the server serves at `/`. Shared protocol types come from ../src/protocol via
 * the `@protocol` alias: its types, and small pure helpers such as `isTerminalEvent` (the
 * events module imports nothing, so nothing from the server ends up in the bundle).
 */
import { fileURLToPath } from 'node:url';
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';

const webRoot = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: webRoot,
  // Relative asset URLs: the client works wherever the server mounts it.
  base: './',
  plugins: [vue()],
  resolve: {
    alias: { '@protocol': fileURLToPath(new URL('../src/protocol', import.meta.url)) },
  },
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 800,
    // The timing report only says the machine was busy (it fires when builds share the CPU
    // with tests); it is noise in `npm start` and test output.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  logLevel: 'warn',
});
