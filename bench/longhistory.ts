/**
 * A repository with a long history for benchmarks: 100 skills × 4 files under `skills/`, and `assets/`, where each
 * of 250 commits replaces a 1 MiB incompressible file (bytes of AES-128-CTR over zeros with a fixed key: the same
 * on every machine). The tip holds 401 blobs; the pack holds 250 MiB of history. Written with `git fast-import`
 * (fixed identities and dates, so the SHAs are always the same) into `dir`, reused when it is there.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createCipheriv } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';

export interface LongHistoryRepo {
  gitdir: string;
  tip: string;
  packMiB: number;
}

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  HOME: '/nonexistent',
};
const COMMITS = 250;
const ASSET_BYTES = 1024 * 1024;

function noise(commit: number): Buffer {
  const iv = Buffer.alloc(16);
  iv.writeUInt32BE(commit, 0); // far apart: no two commits share a counter block
  return createCipheriv('aes-128-ctr', Buffer.alloc(16, 7), iv).update(Buffer.alloc(ASSET_BYTES));
}

function skillFiles(): Array<[string, string]> {
  const files: Array<[string, string]> = [];
  for (let s = 0; s < 100; s++) {
    const name = `long-${String(s).padStart(3, '0')}`;
    const text =
      `Step of skill ${s}: read the inputs, check them against the rules, write the result.\n`.repeat(20);
    files.push([
      `skills/${name}/SKILL.md`,
      `---\nname: ${name}\ndescription: Skill ${s} of a long history.\n---\n\n${text}`,
    ]);
    for (let f = 1; f < 4; f++) files.push([`skills/${name}/references/file-${f}.md`, `# ${f}\n\n${text}`]);
  }
  return files;
}

export async function longHistoryRepo(dir: string): Promise<LongHistoryRepo> {
  const gitdir = path.join(dir, 'longhistory.git');
  if (!existsSync(path.join(gitdir, 'refs', 'heads', 'main'))) {
    rmSync(gitdir, { recursive: true, force: true });
    mkdirSync(gitdir, { recursive: true });
    execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', gitdir], { env: GIT_ENV });
    const child = spawn('git', ['--git-dir', gitdir, 'fast-import', '--quiet'], {
      env: GIT_ENV,
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    const done = new Promise<number | null>((resolve) => child.once('close', resolve));
    const write = (chunk: string | Buffer) =>
      child.stdin.write(chunk) ? Promise.resolve() : new Promise<void>((r) => child.stdin.once('drain', r));
    for (let c = 0; c < COMMITS; c++) {
      const message = `history ${c}\n`;
      await write(
        `commit refs/heads/main\ncommitter bench <bench@skillpin.invalid> ${1_700_000_000 + c * 60} +0000\ndata ${message.length}\n${message}`,
      );
      if (c === 0)
        for (const [file, content] of skillFiles())
          await write(`M 100644 inline ${file}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
      await write(`M 100644 inline assets/data.bin\ndata ${ASSET_BYTES}\n`);
      await write(noise(c));
      await write('\n\n');
    }
    child.stdin.end();
    if ((await done) !== 0) throw new Error('fast-import failed');
    // One pack, as a long-lived repository has after git gc.
    execFileSync('git', ['--git-dir', gitdir, 'repack', '-a', '-d', '-q'], { env: GIT_ENV });
  }
  const tip = execFileSync('git', ['--git-dir', gitdir, 'rev-parse', 'main'], {
    encoding: 'utf8',
    env: GIT_ENV,
  }).trim();
  const sizes = execFileSync('git', ['--git-dir', gitdir, 'count-objects', '-v'], {
    encoding: 'utf8',
    env: GIT_ENV,
  });
  const packKiB = Number(/size-pack: (\d+)/.exec(sizes)?.[1] ?? 0);
  return { gitdir, tip, packMiB: packKiB / 1024 };
}
