import { describe, expect, it } from 'vitest';
import { startFailureReport } from '../../src/commands/serve.ts';
import { fixture } from '../helpers/fixtures.ts';
import { startHttp, writeConfig } from '../helpers/server.ts';
import { serveInProcess } from '../helpers/serving.ts';
import { until } from '../helpers/until.ts';

// Neither reaches a network: .invalid never resolves (RFC 6761), and nothing listens on loopback port 9.
const failing = [
  { id: 'nowhere', url: 'http://nonexistent.invalid/acme/skills.git', ref: 'main' },
  { id: 'refused', url: 'http://127.0.0.1:9/acme/skills.git', ref: 'main' },
];
const UNREACHABLE = 'the remote could not be reached (connection refused or reset, unknown host, no route)';

/** The report of `failing` from the default (cli) backend; `ms` stands for how long curl tried to connect. */
const reportOf = (ms: string) =>
  [
    'skillpin: serving, but no source synced at start; each is tried again, backing off (skillpin status shows them):',
    `  nowhere: source-unreachable: listing the refs of http://nonexistent.invalid/acme/skills.git: ${UNREACHABLE}`,
    "    git: unable to access 'http://nonexistent.invalid/acme/skills.git/': Could not resolve host: nonexistent.invalid",
    `  refused: source-unreachable: listing the refs of http://127.0.0.1:9/acme/skills.git: ${UNREACHABLE}`,
    `    git: unable to access 'http://127.0.0.1:9/acme/skills.git/': Failed to connect to 127.0.0.1 port 9 after ${ms} ms: Couldn't connect to server`,
    '',
  ].join('\n');
const msOf = (report: string | undefined) => /port 9 after (\d+) ms/.exec(report ?? '')?.[1] ?? '?';

describe('serve when no source syncs at start', () => {
  it('serves, and reports each source with its reason code, sentence and what git said', async () => {
    const server = await serveInProcess(writeConfig({ sources: failing }));
    try {
      const report = startFailureReport(await server.serving.firstSyncs);
      expect(report).toBe(reportOf(msOf(report)));
      expect((await fetch(new URL('/healthz', server.url))).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it('reports nothing when one source synced', async () => {
    const catalog = fixture('catalog');
    const local = { id: 'catalog', path: catalog.gitdir, ref: 'main', paths: ['skills'] };
    const server = await serveInProcess(writeConfig({ sources: [local, failing[0]] }), { http: false });
    try {
      const outcomes = await server.serving.firstSyncs;
      expect([outcomes.map((o) => [o.id, o.ok]), startFailureReport(outcomes)]).toEqual([
        [
          ['catalog', true],
          ['nowhere', false],
        ],
        undefined,
      ]);
    } finally {
      await server.stop();
    }
  });

  it('says so on stderr in plain words beside JSON logs (the process)', async () => {
    const server = await startHttp(writeConfig({ sources: failing }));
    try {
      const report = await until('the report on stderr', () => {
        // Whole lines only (each ends with a newline), the JSON log lines left out.
        const plain = server
          .stderr()
          .split('\n')
          .slice(0, -1)
          .filter((line) => !line.startsWith('{'));
        return plain.length >= 5 && `${plain.join('\n')}\n`;
      });
      expect(report).toBe(reportOf(msOf(report)));
    } finally {
      await server.stop();
    }
  });
});
