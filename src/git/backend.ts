import { execFile } from 'node:child_process';
import { defaultGitSettings } from '../config/rules.ts';
import type { GitSettings } from '../config/types.ts';
import { openCliRepository } from './cli/backend.ts';
import { GitError } from './errors.ts';
import { type BackendName, gitdirOf, type Repository } from './repository.ts';

/**
 * The oldest git the cli backend runs: 2.32 is the first to take GIT_CONFIG_GLOBAL (so the user's global config
 * is never read) beside GIT_CONFIG_COUNT (2.31: configuration, credentials included, in the environment, not
 * argv). Ubuntu 22.04 ships 2.34, Debian 12 2.39.
 */
export const MIN_GIT_VERSION: readonly [number, number] = [2, 32];

/** Which backend runs and why: for the start-up log and `skillpin status`. */
export interface GitBackendInfo {
  backend: BackendName;
  reason: string;
  /** The git on PATH, when there is one. */
  gitVersion?: string;
}

/** `cat-file --batch-command` came with git 2.36. */
const BATCH_COMMAND_VERSION: readonly [number, number] = [2, 36];

const atLeast = (major: number, minor: number, [wantMajor, wantMinor]: readonly [number, number]) =>
  major > wantMajor || (major === wantMajor && minor >= wantMinor);

interface Probe {
  version?: string;
  usable: boolean;
  batchCommand: boolean;
}

let probe: Promise<Probe> | undefined;

/** `git --version` of the git on PATH, asked once per process. */
function probeGit(): Promise<Probe> {
  probe ??= new Promise((resolve) => {
    execFile('git', ['--version'], { timeout: 10_000 }, (error, stdout) => {
      const match = /git version (\d+)\.(\d+)(?:\.(\d+))?/.exec(stdout ?? '');
      if (error !== null || match === null) return resolve({ usable: false, batchCommand: false });
      const [major, minor] = [Number(match[1]), Number(match[2])];
      const version = `${major}.${minor}.${match[3] ?? 0}`;
      resolve({
        version,
        usable: atLeast(major, minor, MIN_GIT_VERSION),
        batchCommand: atLeast(major, minor, BATCH_COMMAND_VERSION),
      });
    });
  });
  return probe;
}

const minimum = `${MIN_GIT_VERSION[0]}.${MIN_GIT_VERSION[1]}`;

/** Resolves `git.backend` (`auto` picks the git binary when a recent enough one is on PATH). */
export async function describeGitBackend(
  settings: GitSettings = defaultGitSettings(),
): Promise<GitBackendInfo> {
  // Chosen by configuration: no git is asked (and none runs).
  if (settings.backend === 'isomorphic')
    return { backend: 'isomorphic', reason: 'configured (git.backend: isomorphic)' };
  const git = await probeGit();
  const found = git.version === undefined ? 'no git on PATH' : `git ${git.version} on PATH`;
  const gitVersion = git.version;
  if (settings.backend === 'cli')
    return {
      backend: 'cli',
      reason: git.usable ? `configured, ${found}` : `configured, but ${found} (at least ${minimum} needed)`,
      gitVersion,
    };
  return git.usable
    ? { backend: 'cli', reason: `auto: ${found} (at least ${minimum} needed)`, gitVersion }
    : {
        backend: 'isomorphic',
        reason: `auto: ${found}${git.version === undefined ? '' : `, older than ${minimum}`}`,
        gitVersion,
      };
}

async function open(gitdir: string, store: boolean, settings: GitSettings): Promise<Repository> {
  const chosen = await describeGitBackend(settings);
  if (chosen.backend === 'isomorphic') {
    // isomorphic-git loads only when this backend is chosen.
    const { openIsomorphicRepository } = await import('./isomorphic/backend.ts');
    return openIsomorphicRepository(gitdir, store, settings.proxy);
  }
  const git = await probeGit();
  if (!git.usable)
    throw new GitError(
      'source-unsupported',
      `git.backend is cli, but ${chosen.reason.replace(/^configured, but /, '')}`,
    );
  return openCliRepository(gitdir, store, {
    git: 'git',
    batchCommand: git.batchCommand,
    maxMemoryBytes: settings.maxMemoryBytes,
    proxy: settings.proxy,
  });
}

/**
 * Opens a local repository in place: a work tree (with `.git`) or a bare repository. Nothing is written. `label`
 * is the path as the user gave it, for messages.
 */
export async function openLocalRepository(
  location: string,
  settings?: GitSettings,
  label?: string,
): Promise<Repository> {
  return open(await gitdirOf(location, label), false, settings ?? defaultGitSettings());
}

/** Opens (creating if needed) the bare repository skillpin keeps for a remote source. */
export async function openStore(gitdir: string, settings?: GitSettings): Promise<Repository> {
  return open(gitdir, true, settings ?? defaultGitSettings());
}
