import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'libs/*/src/**/*.test.ts',
      'services/*/src/**/*.test.ts',
      'libs/*/test/**/*.test.ts',
      'services/*/test/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    globalSetup: ['test/global-setup.ts'],
    // Spawned roles run the sources under test, never a dist/ build left over from `make build`.
    env: { SHADOWPLANE_RUN_FROM: 'src' },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
