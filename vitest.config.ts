import { defineConfig } from 'vitest/config';

/** Unit tests start no process and open no server (test/unitSetup.ts fails one that does): `npm run test:unit`. */
const UNIT = [
  'test/{catalog,config,deploy,index,mcp,skills}/**/*.test.ts',
  'test/{docs,layers,temp}.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ['test/globalSetup.ts'],
    setupFiles: ['test/setup.ts'],
    projects: [
      // Unit files share one module graph (isolate: false): half the CPU of a fresh one per file.
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT,
          setupFiles: ['test/unitSetup.ts'],
          isolate: false,
          // Git read in-process: the pure-JS backend (the cli backend runs git, a process).
          env: { SKILLPIN_GIT_BACKEND: 'isomorphic' },
        },
      },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: UNIT } },
      // The sync and end-to-end tests again with the other git backend (test/git/ runs both itself).
      {
        extends: true,
        test: {
          name: 'isomorphic',
          include: ['test/sync/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          // These read local repositories only, and pack, browse or scrape once is enough.
          exclude: ['test/e2e/{package,statusPage,metrics}.test.ts'],
          env: { SKILLPIN_GIT_BACKEND: 'isomorphic' },
        },
      },
    ],
  },
});
