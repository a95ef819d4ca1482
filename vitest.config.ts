import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'mcp-servers/*/src/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'web/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start real servers and subprocesses; two cores is the machine's size.
    maxWorkers: 2,
    reporters: ['default', './test/support/summary-reporter.ts'],
    globalSetup: ['./test/support/global-setup.ts'],
  },
});
