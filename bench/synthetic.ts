/**
 * A synthetic skill repository for benchmarks: `skills` skills of `filesPerSkill` files each, written with
 * `git fast-import` (fixed identities and dates, so the same arguments give the same SHAs), plus a second
 * commit that changes one file. Returns the bare repository and both commits.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';

export interface SyntheticRepo {
  gitdir: string;
  base: string;
  changed: string;
  files: number;
}

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  HOME: '/nonexistent',
};

function body(skill: number, file: number): string {
  const line = `Step ${file} of skill ${skill}: read the inputs, check them against the rules, write the result.\n`;
  return `# File ${file}\n\n${line.repeat(8 + ((skill * 7 + file) % 24))}`;
}

export function syntheticRepo(dir: string, skills = 1000, filesPerSkill = 5): SyntheticRepo {
  const gitdir = path.join(dir, `synthetic-${skills}x${filesPerSkill}.git`);
  if (!existsSync(path.join(gitdir, 'refs', 'heads', 'changed'))) {
    rmSync(gitdir, { recursive: true, force: true });
    mkdirSync(gitdir, { recursive: true });
    execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', gitdir], { env: GIT_ENV });
    const out: string[] = [];
    const commit = (
      ref: string,
      when: number,
      message: string,
      files: Array<[string, string]>,
      from?: string,
    ) => {
      out.push(
        `commit ${ref}`,
        `committer bench <bench@skillpin.invalid> ${when} +0000`,
        `data ${Buffer.byteLength(message)}`,
        message,
      );
      if (from !== undefined) out.push(`from ${from}`);
      for (const [file, content] of files)
        out.push(`M 100644 inline ${file}`, `data ${Buffer.byteLength(content)}`, content);
      out.push('');
    };
    const files: Array<[string, string]> = [];
    for (let s = 0; s < skills; s++) {
      const name = `skill-${String(s).padStart(4, '0')}`;
      files.push([
        `skills/${name}/SKILL.md`,
        `---\nname: ${name}\ndescription: Synthetic skill number ${s} for benchmarks.\n---\n\n${body(s, 0)}`,
      ]);
      for (let f = 1; f < filesPerSkill; f++)
        files.push([`skills/${name}/${f % 2 === 0 ? 'scripts' : 'references'}/file-${f}.md`, body(s, f)]);
    }
    commit('refs/heads/main', 1_700_000_000, 'base', files);
    commit(
      'refs/heads/changed',
      1_700_000_100,
      'one file changes',
      [['skills/skill-0000/references/file-1.md', `${body(0, 1)}One more line.\n`]],
      'refs/heads/main',
    );
    const run = spawnSync('git', ['--git-dir', gitdir, 'fast-import', '--quiet'], {
      input: `${out.join('\n')}\n`,
      env: GIT_ENV,
    });
    if (run.status !== 0) throw new Error(`fast-import failed: ${run.stderr.toString()}`);
  }
  const rev = (ref: string) =>
    execFileSync('git', ['--git-dir', gitdir, 'rev-parse', ref], { encoding: 'utf8', env: GIT_ENV }).trim();
  return { gitdir, base: rev('main'), changed: rev('changed'), files: skills * filesPerSkill };
}
