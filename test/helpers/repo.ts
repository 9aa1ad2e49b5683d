import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git } from './git.ts';
import { tempDir } from './temp.ts';

/** A work-tree repository with one commit holding `files`; returns its folder and the commit. */
export function makeRepo(files: Record<string, string | Uint8Array>): { dir: string; commit: string } {
  const dir = tempDir('skillpin-repo-');
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  git(['-C', dir, 'init', '--quiet', '--initial-branch=main']);
  git(['-C', dir, 'add', '--all']);
  git(['-C', dir, 'commit', '--quiet', '-m', 'fixture']);
  return { dir, commit: git(['-C', dir, 'rev-parse', 'HEAD']) };
}
