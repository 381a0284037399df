import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['./test/helpers/build-editor.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    // `npm test` runs both; `npx vitest run --project behaviour` leaves out the machinery.
    projects: [
      // What the service does, through its public surface.
      { test: { name: 'behaviour', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/machinery/**'] } },
      // How it does it: threads and their priorities, heap and garbage collection, event-loop stalls and turns.
      { test: { name: 'machinery', include: ['test/machinery/**/*.test.ts'] } },
    ],
  },
});
