import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/** Unit tests start no process and open no server (test/unitSetup.ts fails one that does): `npm run test:unit`. */
const UNIT = [
  'test/{catalog,config,deploy,index,mcp,skills}/**/*.test.ts',
  'test/{docs,layers,temp}.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    // One worker more than the cores: most test files spend their time waiting on git children, sockets and
    // loopback remotes, not on this process. vitest's default (cores - 1) ran one file at a time on 2 cores:
    // 550 s there, 117 s with 3 workers (4 were no faster).
    maxWorkers: availableParallelism() + 1,
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
      // Sync and end-to-end run once, on the default backend: both backends answer to test/git/'s contract suites.
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: UNIT } },
    ],
  },
});
