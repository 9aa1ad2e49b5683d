import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { fixture } from '../helpers/fixtures.ts';
import { connectHttp, startHttp, writeConfig, type HttpServerProcess } from '../helpers/server.ts';
import { until } from '../helpers/until.ts';
import { cli } from '../helpers/cli.ts';

const catalog = fixture('catalog');
const root = fixture('root-skill');
const links = fixture('symlinks');
const c1 = catalog.commits['c1']!;
const c2 = catalog.commits['c2']!;

const file = writeConfig({
  sources: [
    { id: 'catalog', path: catalog.gitdir, commit: c2, paths: ['skills'] },
    { id: 'root', path: root.gitdir, ref: 'HEAD' },
  ],
});
const dataDir = path.join(path.dirname(file), 'data');
const rewrite = (config: Record<string, unknown>) => writeFileSync(file, stringify({ dataDir, ...config }));

/** The source ids and commits skills/list shows. */
async function listed(url: string): Promise<string[]> {
  const { client, close } = await connectHttp(url, 'modern');
  try {
    const { skills } = await new SkillsClient(client).list();
    return [...new Set(skills.map((skill) => skill.uri.split('/').slice(2, 4).join('@')))].sort();
  } finally {
    await close();
  }
}

describe('reloading the config of a running server', () => {
  let server: HttpServerProcess;
  beforeAll(async () => {
    server = await startHttp(file);
    await until('the first syncs', async () => (await listed(server.url)).length === 2);
  });
  afterAll(async () => server.stop());

  const logged = (message: string) =>
    server
      .stderr()
      .split('\n')
      .filter((line) => line.includes(message)).length;

  it('`skillpin reload` applies added, removed and changed sources in one swap, without a restart', async () => {
    expect(await listed(server.url)).toEqual([`catalog@${c2}`, `root@${root.commits['c1']}`]);
    rewrite({
      sources: [
        { id: 'catalog', path: catalog.gitdir, commit: c1, paths: ['skills'] },
        { id: 'links', path: links.gitdir, ref: 'main' },
      ],
    });
    const result = await cli('reload', '--config', file);
    expect(result).toEqual({
      status: 0,
      stdout: `sent SIGHUP to skillpin serve (pid ${server.child.pid}): it re-reads the config it was started with; its log says what changed\n`,
      stderr: '',
    });
    await until('the reload', () => logged('config reloaded') === 1);
    const line = JSON.parse(
      server
        .stderr()
        .split('\n')
        .find((l) => l.includes('config reloaded'))!,
    );
    expect([line.added, line.removed, line.changed]).toEqual([['links'], ['root'], ['catalog']]);
    const expected = [`catalog@${c1}`, `links@${links.commits['c1']}`];
    await until('the new sources to sync', async () => `${await listed(server.url)}` === `${expected}`);
    expect(server.child.exitCode).toBeNull();
  });

  it('SIGHUP with a config that has problems logs every one and keeps serving the config running', async () => {
    const before = await listed(server.url);
    writeFileSync(
      file,
      `dataDir: ${dataDir}\nsources:\n  - id: catalog\n    path: x\n    branch: main\n    poll: 30\n`,
    );
    server.child.kill('SIGHUP');
    await until('the refusal', () => logged('reload refused') === 1);
    expect(server.stderr()).toContain(
      `${file}:5:5: sources[0]: unknown key \\"branch\\"; did you mean \\"ref\\"?`,
    );
    expect(server.stderr()).toContain(
      `${file}:6:11: sources[0].poll: must be a duration like 30s, 5m, 1m30s, 1h or 2d`,
    );
    expect(await listed(server.url)).toEqual(before);
    expect(server.child.exitCode).toBeNull();
  });

  it('`skillpin reload` refuses a config with problems before signalling, and says when nothing serves it', async () => {
    const refused = await cli('reload', '--config', file);
    expect(refused.status).toBe(78);
    expect(refused.stderr.split('\n')[0]).toBe(
      `skillpin: ${file}:5:5: sources[0]: unknown key "branch"; did you mean "ref"?`,
    );
    expect(logged('reload refused')).toBe(1);
    const idle = writeConfig({ sources: [{ id: 'catalog', path: catalog.gitdir, commit: c2 }] });
    const nobody = await cli('reload', '--config', idle);
    expect(nobody.status).toBe(69);
    expect(nobody.stderr).toMatch(/^skillpin reload: no skillpin process holds .*; nothing to reload/);
  });
});
