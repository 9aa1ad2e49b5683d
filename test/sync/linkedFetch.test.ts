import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../src/config/index.ts';
import { openSource, storeDirOf } from '../../src/sync/source.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { fixture } from '../helpers/fixtures.ts';
import { git } from '../helpers/git.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { tempDir } from '../helpers/temp.ts';

const mirrors = fixture('mirrors');
const c1 = mirrors.commits['c1']!;
const blobOf = (file: string) => git(['--git-dir', mirrors.gitdir, 'rev-parse', `${c1}:${file}`]);
const has = (gitdir: string, oid: string) =>
  spawnSync('git', ['--git-dir', gitdir, 'cat-file', '-e', oid]).status === 0;

describe.each(BACKENDS)(
  'a remote source whose paths hold only links to skills ($name backend)',
  ({ name, settings }) => {
    let server: GitHttpServer;
    const dirs: string[] = [];
    beforeAll(async () => {
      const root = tempDir('skillpin-remote-');
      dirs.push(root);
      git(['clone', '--quiet', '--bare', mirrors.gitdir, path.join(root, 'mirrors.git')]);
      server = await startGitHttpServer({
        root,
        config: { 'uploadpack.allowAnySHA1InWant': 'true', 'uploadpack.allowFilter': 'true' },
      });
    });
    afterAll(async () => {
      await server.close();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it(`fetches the blobs of the skills the links lead to (${name === 'cli' ? 'and no other outside paths' : 'the whole snapshot'}) and serves them`, async () => {
      const dataDir = tempDir('skillpin-data-');
      dirs.push(dataDir);
      const config: SourceConfig = {
        id: 'mirrors',
        location: { kind: 'remote', url: server.urlFor('mirrors.git') },
        target: { kind: 'commit', commit: c1 },
        paths: ['.codex/skills'],
        strictNames: false,
        keep: 0,
        timeoutMs: 10_000,
        git: settings,
      };
      const source = openSource(config, { dataDir });
      try {
        const ns = await source.load(await source.resolve());
        expect(ns.skills.map((skill) => [skill.dir, skill.files.map((file) => file.path)])).toEqual([
          ['extra/lint', ['extra/lint/SKILL.md', 'extra/lint/rules.md']],
          ['skills/pdf', ['skills/pdf/SKILL.md', 'skills/pdf/guide.md']],
        ]);
        expect(ns.problems.map((p) => [p.path, p.reason])).toEqual([
          ['.codex/skills/lint', 'skill-alias'],
          ['.codex/skills/pdf', 'skill-alias'],
        ]);
        const store = storeDirOf(dataDir, config);
        expect(has(store, blobOf('extra/lint/rules.md'))).toBe(true);
        // A partial clone leaves out what no skill serves.
        expect(has(store, blobOf('skills/review/SKILL.md'))).toBe(name !== 'cli');
      } finally {
        await source.close();
      }
    });
  },
);
