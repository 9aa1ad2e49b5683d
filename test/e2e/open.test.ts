import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/shared/status.ts';
import { startGitHttpServer, type GitHttpServer } from '../helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { waitReady } from '../helpers/ready.ts';
import { makeRepo } from '../helpers/repo.ts';
import { cli } from '../helpers/cli.ts';
import { connectHttp, writeConfig } from '../helpers/server.ts';
import { serveInProcess } from '../helpers/serving.ts';
import { drippingRemote, silentRemote, type SlowRemote } from '../helpers/slowRemotes.ts';
import { until } from '../helpers/until.ts';

const get = async (url: string) => {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

describe('serve opens at once; a slow source never holds the others', () => {
  let git: GitHttpServer;
  let silent: SlowRemote;
  let drip: SlowRemote;
  let healthy: string;
  let local: { dir: string; commit: string };
  beforeAll(async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'skillpin-open-'));
    healthy = pushableRepo(root, 'skills').push({ 'alpha/SKILL.md': skillMd('alpha', 'healthy') });
    git = await startGitHttpServer({ root });
    silent = await silentRemote();
    drip = await drippingRemote();
    local = makeRepo({ 'beta/SKILL.md': skillMd('beta', 'local') });
  });
  afterAll(async () => {
    await Promise.all([git.close(), silent.close(), drip.close()]);
  });

  it('lists the healthy sources while one never answers and one drips, and is not ready until each was tried', async () => {
    const server = await serveInProcess(
      writeConfig({
        sync: { timeout: '10m' },
        sources: [
          { id: 'silent', url: silent.url, ref: 'main' },
          { id: 'drip', url: drip.url, ref: 'main' },
          { id: 'healthy', url: git.urlFor('skills.git'), ref: 'main' },
          { id: 'local', path: local.dir, commit: local.commit },
        ],
      }),
    );
    try {
      const base = server.url.replace('/mcp', '');
      const { client, close } = await connectHttp(server.url, 'modern');
      const skills = new SkillsClient(client);
      // The healthy remote joins when its sync lands (list_changed); wait for that, not for a time.
      let listed: string[] = [];
      for (;;) {
        listed = (await skills.list()).skills.map((s) => s.uri.split('/').slice(2, 4).join('@')).sort();
        if (listed.length === 2) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await close();
      expect(listed).toEqual([`healthy@${healthy}`, `local@${local.commit}`]);
      // Listed, the healthy source is pending only until its search index is ready (built at its publication).
      expect(
        await until('the healthy search index', async () => {
          const ready = await get(`${base}/readyz`);
          return (ready.body as { pending: string[] }).pending.includes('healthy') ? undefined : ready;
        }),
      ).toEqual({
        status: 503,
        body: { ready: false, pending: ['silent', 'drip'] },
      });
      // The healthy source is listed once its commit is swapped in; its sync ends when state.json is written.
      const status = await until('the healthy sync to end', async () => {
        const report = (await get(`${base}/status`)).body as unknown as StatusReport;
        return report.sources.find((s) => s.id === 'healthy')?.syncing === false ? report : undefined;
      });
      expect(status.sources.map((s) => [s.id, s.syncing, s.current?.commit ?? null])).toEqual([
        ['silent', true, null],
        ['drip', true, null],
        ['healthy', false, healthy],
        ['local', false, local.commit],
      ]);
    } finally {
      await server.stop();
    }
  });

  it('is ready once every source was tried, failed ones included', async () => {
    const server = await serveInProcess(
      writeConfig({
        sync: { timeout: '300ms' },
        sources: [
          { id: 'silent', url: silent.url, ref: 'main' },
          { id: 'local', path: local.dir, commit: local.commit },
        ],
      }),
    );
    try {
      await waitReady(server.url);
      const base = server.url.replace('/mcp', '');
      expect(await get(`${base}/readyz`)).toEqual({ status: 200, body: { ready: true, pending: [] } });
      const status = (await get(`${base}/status`)).body as unknown as StatusReport;
      expect(status.failures.map((f) => [f.id, f.reason])).toEqual([['silent', 'source-timeout']]);
    } finally {
      await server.stop();
    }
  });

  it('a port already in use is one line on stderr and exit 69, before any sync', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    const requestsBefore = git.requests.length;
    const config = writeConfig({ sources: [{ id: 'healthy', url: git.urlFor('skills.git'), ref: 'main' }] });
    const {
      status: code,
      stdout,
      stderr,
    } = await cli('serve', '--config', config, '--http', `127.0.0.1:${port}`);
    await new Promise<void>((resolve) => taken.close(() => resolve()));
    expect([code, stdout, stderr]).toEqual([
      69,
      '',
      `skillpin: cannot listen on 127.0.0.1:${port}: the address is already in use (EADDRINUSE)\n`,
    ]);
    expect(git.requests.length).toBe(requestsBefore);
  });
});
