import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ['test/globalSetup.ts'],
    projects: [
      { extends: true, test: { name: 'default', include: ['test/**/*.test.ts'] } },
      // The sync and end-to-end tests again with the other git backend (test/git/ runs both itself).
      {
        extends: true,
        test: {
          name: 'isomorphic',
          include: ['test/sync/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          env: { SKILLPIN_GIT_BACKEND: 'isomorphic' },
        },
      },
    ],
  },
});
