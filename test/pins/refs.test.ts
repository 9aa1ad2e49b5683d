import { cpSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { diff } from '../../src/commands/diff.ts';
import type { SourceDiff } from '../../src/pins/diffReport.ts';
import { lock } from '../../src/commands/lock.ts';
import { EXIT } from '../../src/shared/exitCodes.ts';
import { readLockfile } from '../../src/pins/lockfile.ts';
import { type UpdateReport, update } from '../../src/commands/update.ts';
import { fixture } from '../helpers/fixtures.ts';
import { git } from '../helpers/git.ts';
import { serveInProcess } from '../helpers/serving.ts';
import { tempDir } from '../helpers/temp.ts';

const fx = () => fixture('versions');
const C = (id: 'c1' | 'c2' | 'c3' | 'c4') => fx().commits[id]!;

describe('pins of a refs: source', () => {
  let dir: string;
  let repo: string;
  let file: string;
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t) } };
  };
  const lockEntries = () =>
    readLockfile(path.join(dir, 'skillpin.lock')).sources.map((s) => [
      s.id,
      s.group ?? null,
      s.ref ?? null,
      s.commit,
    ]);

  beforeAll(() => {
    dir = tempDir('skillpin-refs-lock-');
    repo = path.join(dir, 'policies.git');
    cpSync(fx().gitdir, repo, { recursive: true });
    file = path.join(dir, 'skillpin.yaml');
    writeFileSync(
      file,
      `dataDir: ${path.join(dir, 'data')}\nsources:\n  - id: policies\n    path: ${repo}\n    refs: ["v*"]\n    list: newest\n`,
    );
  });

  it('lock pins every matched ref and says which refs it refuses', async () => {
    const { out, err, io: streams } = io();
    expect(await lock(loadConfig(file), streams)).toBe(0);
    expect(lockEntries()).toEqual([
      ['policies.v2.0.0', 'policies', 'refs/tags/v2.0.0', C('c3')],
      ['policies.v1.1.0', 'policies', 'refs/tags/v1.1.0', C('c2')],
      ['policies.v1.0.0', 'policies', 'refs/tags/v1.0.0', C('c1')],
    ]);
    expect(out.join('')).toBe(
      `policies.v2.0.0: ${C('c3')} (2 skills)\npolicies.v1.1.0: ${C('c2')} (1 skill)\npolicies.v1.0.0: ${C('c1')} (1 skill)\nwrote ${path.join(dir, 'skillpin.lock')}\n`,
    );
    expect(err.join('').split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^policies: refs\/tags\/v2\.1\.0-rc-1 not locked: ref-id-collision: /),
      expect.stringMatching(/^policies: refs\/tags\/v2\.1\.0-rc_1 not locked: ref-id-collision: /),
    ]);
  });

  it('--locked serves exactly the locked refs, each at its locked commit', async () => {
    const server = await serveInProcess(file, { http: false, locked: true });
    try {
      // Local sources are synced before serving starts: the locked refs are all there.
      expect(server.serving.catalog.state.sources.map((s) => [s.id, s.current.commit])).toEqual([
        ['policies.v2.0.0', C('c3')],
        ['policies.v1.1.0', C('c2')],
        ['policies.v1.0.0', C('c1')],
      ]);
    } finally {
      await server.stop();
    }
  });

  it('update reports the refs added, moved and removed', async () => {
    git(['--git-dir', repo, 'update-ref', 'refs/tags/v2.0.0', C('c4')]);
    git(['--git-dir', repo, 'update-ref', 'refs/tags/v3.0.0', C('c4')]);
    git(['--git-dir', repo, 'update-ref', '-d', 'refs/tags/v1.0.0']);
    const { out, io: streams } = io();
    expect(await update(loadConfig(file), [], 'json', streams)).toBe(1);
    const report = JSON.parse(out.join('')) as UpdateReport;
    expect(report.sources.map((s) => [s.source, s.from?.commit ?? null, s.to?.commit ?? null])).toEqual([
      ['policies.v3.0.0', null, C('c4')],
      ['policies.v2.0.0', C('c3'), C('c4')],
      ['policies.v1.0.0', C('c1'), null],
    ]);
    expect(lockEntries()).toEqual([
      ['policies.v3.0.0', 'policies', 'refs/tags/v3.0.0', C('c4')],
      ['policies.v2.0.0', 'policies', 'refs/tags/v2.0.0', C('c4')],
      ['policies.v1.1.0', 'policies', 'refs/tags/v1.1.0', C('c2')],
    ]);
  });

  it('diff -c compares two refs of the source by name, and refuses a ref it does not follow', async () => {
    const { out, io: streams } = io();
    const config = loadConfig(file);
    expect(
      await diff({ repository: 'policies', from: 'v1.1.0', to: 'v3.0.0', config, format: 'json' }, streams),
    ).toBe(EXIT.findings);
    const result = JSON.parse(out.join('')) as SourceDiff;
    expect([result.source, result.from?.commit, result.to?.commit]).toEqual(['policies', C('c2'), C('c4')]);
    expect(result.skills.added.map((s) => s.path)).toEqual(['skills/returns']);
    expect(result.skills.changed.map((s) => s.path)).toEqual(['skills/refunds']);
    const refused = io();
    expect(
      await diff({ repository: 'policies', from: 'main', to: 'v3.0.0', config, format: 'text' }, refused.io),
    ).toBe(64);
    expect(refused.err.join('')).toBe('skillpin diff: main is no ref source policies follows (refs: v*)\n');
  });
});
