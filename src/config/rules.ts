import { ConfigError } from './error.ts';
import type { GitSettings } from './types.ts';

/** The rules and defaults of the config that need no schema: the commands and layers that use them load no YAML
 * parser and no zod. */

const SCP_LIKE =
  /^(?:[A-Za-z0-9._~][A-Za-z0-9._~-]*@)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(?!\/\/)[^\s]+$/;

/** What kind of remote a `url:` names, or `undefined` when it is none skillpin fetches from. */
export function remoteKind(url: string): 'http' | 'ssh' | 'scp' | 'file' | undefined {
  if (/^https?:\/\//i.test(url)) return 'http';
  if (/^ssh:\/\/[^-]/i.test(url)) return 'ssh';
  if (/^file:\/\//i.test(url)) return 'file';
  if (!url.includes('://') && SCP_LIKE.test(url)) return 'scp';
  return undefined;
}

/** Why a `paths:` entry cannot name a folder of a repository (absolute, or climbing with ".."); else `undefined`. */
export function repositoryPathProblem(value: string): string | undefined {
  if (value === '') return 'must not be empty';
  return value.startsWith('/') || value.split('/').includes('..')
    ? 'must be a folder inside the repository (relative, no "..")'
    : undefined;
}

/** How many refs a `refs:` source serves at most (`maxRefs`, default DEFAULT_MAX_REFS), and the highest it may say. */
export const DEFAULT_MAX_REFS = 50;
export const MAX_REFS_LIMIT = 1000;

/*
 * The transfer limits when the config does not say (sync.timeout, sync.deadline, sync.maxFetchBytes,
 * sync.maxFetchObjects, git.maxMemory): the schema's defaults, and what git/ falls back on for a caller
 * without a config (check, diff).
 */
/** Nothing received (or sent) for this long fails a transfer. */
export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;
/** How long one transfer may take, however it moves. */
export const DEFAULT_DEADLINE_MS = 10 * 60_000;
/** Bytes one transfer may bring. */
export const DEFAULT_MAX_FETCH_BYTES = 1024 * 1024 * 1024;
/** Objects one fetch's pack may hold: a depth-1 fetch is a commit, its trees and files (twice git's MAX_TREE_ENTRIES). */
export const DEFAULT_MAX_FETCH_OBJECTS = 2_000_000;
/** The address space (`ulimit -v`) each git process may take, and the processes it starts inherit. */
export const DEFAULT_GIT_MEMORY_BYTES = 1024 * 1024 * 1024;

/** Entries per skills/list and directory page (`pageSize`): the config's default, and a server's made without one. */
export const DEFAULT_PAGE_SIZE = 100;

/**
 * `ttlMs` of listings (they move when a tracked ref does: a minute) and of commit-pinned results (a pinned URI
 * never changes its bytes: a day) (`cache:`): the config's defaults, and a server's made without one.
 */
export const DEFAULT_CACHE_TTL: Readonly<{ listTtlMs: number; pinnedTtlMs: number }> = Object.freeze({
  listTtlMs: 60_000,
  pinnedTtlMs: 86_400_000,
});

/** Prompts beyond a few dozen are noise in a host's prompt menu: the first skills get one, skill_list says so. */
export const DEFAULT_MAX_PROMPTS = 40;

/** Static tokens shorter than this are refused: they are guessable. */
export const MIN_TOKEN_LENGTH = 16;

/** True for a host name or address that only this machine reaches. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return (
    bare === 'localhost' ||
    bare === '::1' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) ||
    /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/i.test(bare)
  );
}

/** An https URL, or http to this machine (a local identity provider, tests): keys and tokens travel over it. */
export function isSecureUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
}

/** `paths:` entries as the indexer compares them: no `./` in front, no `/` at the end, the root as no entry. */
export function normalizePaths(paths: readonly string[]): string[] {
  return paths.map((p) => p.replace(/^\.\/|\/+$/g, '')).filter((p) => p !== '' && p !== '.');
}

const BACKENDS = ['auto', 'cli', 'isomorphic'] as const;

/**
 * The `git:` settings when the config does not say: `SKILLPIN_GIT_BACKEND` (one of auto, cli, isomorphic) or
 * `auto`. The variable lets a whole test run, or a deployment, pick the backend without editing configs.
 */
export function defaultGitSettings(env: NodeJS.ProcessEnv = process.env): GitSettings {
  const chosen = env['SKILLPIN_GIT_BACKEND'];
  if (chosen === undefined || chosen === '') return { backend: 'auto' };
  if (!(BACKENDS as readonly string[]).includes(chosen))
    throw new ConfigError(
      `SKILLPIN_GIT_BACKEND: must be one of ${BACKENDS.join(', ')}, not ${JSON.stringify(chosen)}`,
    );
  return { backend: chosen as GitSettings['backend'] };
}
