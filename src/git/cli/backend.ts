import { promises as fsp } from 'node:fs';
import { redact } from '../../shared/redact.ts';
import { messageOf } from '../../shared/text.ts';
import { cleanedUp, packNames, removePacksSince } from '../cleanup.ts';
import { GitError } from '../errors.ts';
import { transportFailure } from '../failure.ts';
import {
  CLI_READ_AHEAD,
  DEFAULT_DEADLINE_MS,
  DEFAULT_GIT_MEMORY_BYTES,
  DEFAULT_MAX_FETCH_BYTES,
  DEFAULT_MAX_FETCH_OBJECTS,
  MAX_OBJECT_BYTES,
} from '../limits.ts';
import { OID } from '../objects.ts';
import { isRepository, type Remote, type Repository, type TransferOptions } from '../repository.ts';
import { redactUrl } from '../url.ts';
import { catFileReader, HEADER, type ObjectReader } from './catFile.ts';
import { classifyRun, type RunContext } from './classify.ts';
import type { Refusal } from '../packGuard.ts';
import { fetchBounds } from './fetchBounds.ts';
import { lsTree } from './lsTree.ts';
import { parseProgress } from './progress.ts';
import { type LastListing, listRefs, listRemoteRefs, refReader, updateRef } from './refs.ts';
import { type Git, type GitRunResult, type RunOptions, runGit } from './run.ts';
import { type CliSettings, transport } from './transport.ts';

/** Objects' sizes from their headers, their content never inflated. */
function sizeReaders(git: Git, reader: () => ObjectReader) {
  /** By one `cat-file --batch-check`: the store as it is on disk now. */
  const checkedSizes = async (oids: readonly string[]): Promise<Array<number | undefined>> => {
    if (oids.length === 0) return [];
    const result = await git(['cat-file', '--batch-check'], { input: `${oids.join('\n')}\n` });
    if (result.code !== 0)
      throw new GitError('source-incomplete', 'the store could not be read', { log: redact(result.stderr) });
    const sizes = new Map<string, number>();
    for (const line of result.stdout.toString('latin1').split('\n')) {
      const match = HEADER.exec(line);
      if (match !== null) sizes.set(match[1]!, Number(match[3]));
    }
    return oids.map((oid) => sizes.get(oid));
  };
  /**
   * Asked of the running reader (`info`, git 2.36 and later), which may still read a pack removed since it opened
   * it; else as `checkedSizes`.
   */
  const objectSizes = async (oids: readonly string[]): Promise<Array<number | undefined>> => {
    const objects = reader();
    if (objects.headers === undefined) return checkedSizes(oids);
    const sizes = new Map<string, number>();
    await objects.headers(oids, CLI_READ_AHEAD, (oid, found) => {
      if (found !== undefined) sizes.set(oid, found.size);
    });
    return oids.map((oid) => sizes.get(oid));
  };
  return { checkedSizes, objectSizes };
}

/** One repository's git: its settings, the children it started, and its long-lived object reader. */
interface Cli {
  gitdir: string;
  settings: CliSettings;
  git: Git;
  readonly objects: ObjectReader;
  /** Every child still running, and the signal that kills them all when the repository is closed. */
  running: Set<Promise<GitRunResult>>;
  closing: AbortController;
}

/** `git --git-dir <gitdir> <args>`, with the settings' variables and memory, killed when the repository closes. */
function runIn(cli: Cli, args: string[], options: RunOptions = {}): Promise<GitRunResult> {
  const run = runGit(cli.settings.git, ['--git-dir', cli.gitdir, ...args], {
    ...options,
    maxMemoryBytes: cli.settings.maxMemoryBytes,
    closing: cli.closing.signal,
    vars: { ...cli.settings.vars, ...options.vars },
  });
  cli.running.add(run);
  const forget = () => cli.running.delete(run);
  run.then(forget, forget);
  return run;
}

/** Creates the bare repository skillpin keeps for a remote source, unless it exists. */
async function initStore(gitdir: string, settings: CliSettings): Promise<void> {
  if (await isRepository(gitdir)) return;
  await fsp.mkdir(gitdir, { recursive: true });
  const made = await runGit(settings.git, ['init', '--quiet', '--bare', gitdir], {
    maxMemoryBytes: settings.maxMemoryBytes,
    vars: settings.vars ?? {},
  });
  if (made.code !== 0)
    throw new GitError('source-fetch-failed', 'the store in dataDir could not be created', {
      log: `git init ${gitdir}: ${redact(made.stderr.trim())}`,
    });
}

/** A repository read through a long-lived `git cat-file --batch`, with the git binary for refs and the network. */
export async function openCliRepository(
  gitdir: string,
  store: boolean,
  settings: CliSettings,
): Promise<Repository> {
  if (store) await initStore(gitdir, settings);
  const cli: Cli = {
    gitdir,
    settings,
    git: (args, options) => runIn(cli, args, options),
    objects: catFileReader(
      settings.git,
      gitdir,
      settings.vars,
      settings.batchCommand,
      settings.maxMemoryBytes,
    ),
    running: new Set(),
    closing: new AbortController(),
  };
  const { git } = cli;
  const { checkedSizes, objectSizes } = sizeReaders(git, () => cli.objects);
  const local: RunContext = { memoryBytes: settings.maxMemoryBytes ?? DEFAULT_GIT_MEMORY_BYTES };
  const listing: LastListing = {};
  const refTarget = refReader(git);
  return {
    gitdir,
    backend: 'cli',
    partial: true,
    readObject: (oid) => cli.objects.read(oid),
    readEach: (oids, each) => cli.objects.readEach(oids, CLI_READ_AHEAD, each),
    async missingObjects(oids) {
      // Asked of a new process: whether the store holds them now, not whether the reader still can.
      const sizes = await checkedSizes(oids);
      return oids.filter((_, i) => sizes[i] === undefined);
    },
    objectSizes,
    listTree: (commit) => lsTree(git, objectSizes, commit),
    objectsWithPrefix: (prefix) => objectsWithPrefix(git, prefix),
    readRef: async (name) => (await refTarget(name))?.oid,
    refTarget,
    listRefs: (prefixes) => listRefs(git, local, prefixes),
    writeRef: (name, oid) => updateRef(git, local, name, oid),
    deleteRef: (name) => updateRef(git, local, name),
    listRemoteRefs: (remote, names) => listRemoteRefs(git, settings, remote, names, listing),
    fetch: (remote, commit, options) => fetchCommit(cli, remote, commit, options),
    fetchBlobs: (remote, oids, options) => fetchBlobs(cli, remote, oids, options),
    refresh: () => cli.objects.renew(),
    async close() {
      // Every child it started ends, with whatever each started (its process group), before close returns.
      cli.closing.abort();
      cli.closing = new AbortController();
      await Promise.allSettled([...cli.running, cli.objects.close()]);
    },
  };
}

/** The objects whose ids start with `prefix` (4 to 40 hex digits; anything else: none). */
async function objectsWithPrefix(git: Git, prefix: string): Promise<string[]> {
  if (!/^[0-9a-f]{4,40}$/.test(prefix)) return [];
  const result = await git(['rev-parse', `--disambiguate=${prefix}`]);
  return result.stdout
    .toString('latin1')
    .split('\n')
    .filter((line) => OID.test(line));
}

function fetchCommit(cli: Cli, remote: Remote, commit: string, options: TransferOptions): Promise<void> {
  // Every pin is sent as a have, so only what the store lacks comes over.
  return fetchInto(
    cli,
    remote,
    [
      '--depth=1',
      options.blobless ? '--filter=blob:none' : '--no-filter',
      'origin',
      ...(options.tag === undefined ? [] : [options.tag]),
      commit,
    ],
    `fetching ${commit}`,
    options,
  );
}

async function fetchBlobs(
  cli: Cli,
  remote: Remote,
  oids: readonly string[],
  options: TransferOptions,
): Promise<void> {
  // As git's own lazy fetch of a partial clone does: ids on stdin, no negotiation.
  await fetchInto(
    cli,
    remote,
    ['--filter=blob:none', '--stdin', 'origin'],
    `fetching ${oids.length} blob(s)`,
    options,
    {
      input: `${oids.join('\n')}\n`,
      config: [['fetch.negotiationAlgorithm', 'noop']],
    },
  ).catch((error: unknown) => {
    if (error instanceof GitError && error.code === 'source-commit-not-found')
      throw new GitError(
        'source-fetch-failed',
        `${error.message} (the server filtered blobs but refuses to send them by id)`,
      );
    throw error;
  });
}

/**
 * Configuration of every fetch: a partial clone's packs are marked as coming from a promisor remote; the
 * configuration that says so is given to the fetch only, so a reader never tries to fetch a missing object on its
 * own.
 */
const FETCH_CONFIG: Array<[string, string]> = [
  ['extensions.partialClone', 'origin'],
  ['remote.origin.promisor', 'true'],
  ['remote.origin.partialclonefilter', 'blob:none'],
  // Every transfer stays one pack (git would explode small ones into loose objects): what came is visible.
  ['transfer.unpackLimit', '1'],
  // index-pack streams larger objects (the blobs over MAX_OBJECT_BYTES the transfer's size rule keeps) to disk
  // instead of holding them whole (its default is 512 MiB).
  ['core.bigFileThreshold', String(MAX_OBJECT_BYTES)],
];

/**
 * One `git fetch` from `remote` into the store, within the remote's bounds (fetchBounds): after a failed or
 * refused transfer what it left is removed, and the error says what failed.
 */
async function fetchInto(
  cli: Cli,
  remote: Remote,
  args: string[],
  what: string,
  options: TransferOptions,
  more: { input?: string; config?: Array<[string, string]> } = {},
): Promise<void> {
  const { gitdir } = cli;
  const { context, ...run } = transport(remote, cli.settings);
  const where = `${what} from ${redactUrl(remote.url)}`;
  run.config = [...run.config!, ...FETCH_CONFIG, ...(more.config ?? [])];
  const before = await packNames(gitdir);
  const bounds = await fetchBounds(gitdir, before, {
    maxBytes: remote.maxFetchBytes ?? DEFAULT_MAX_FETCH_BYTES,
    maxObjects: remote.maxFetchObjects ?? DEFAULT_MAX_FETCH_OBJECTS,
    deadlineMs: remote.deadlineMs ?? DEFAULT_DEADLINE_MS,
  });
  let result: GitRunResult;
  let passed: Refusal | undefined;
  try {
    result = await cli.git(
      ['fetch', '--progress', '--no-tags', '--no-write-fetch-head', '--recurse-submodules=no', ...args],
      {
        ...run,
        signal: bounds.signal,
        input: more.input,
        onStderrLine: (line) => {
          const progress = parseProgress(line);
          if (progress === undefined) return;
          bounds.progress(progress);
          options.onProgress?.(progress);
        },
      },
    );
    passed = await bounds.passed(result);
  } catch (error) {
    throw await cleanedUp(
      gitdir,
      transportFailure('source-fetch-failed', where, {}, { log: messageOf(error) }),
    );
  } finally {
    await bounds.stop();
  }
  // After a failed transfer: what it left is removed at once, and named in the log. A refused one leaves no pack,
  // even one git completed before it was stopped.
  if (passed !== undefined) {
    await removePacksSince(gitdir, before);
    throw await cleanedUp(gitdir, transportFailure(passed.reason, where, passed.facts, { log: passed.why }));
  }
  if (result.code !== 0 || result.stopped !== undefined)
    throw await cleanedUp(gitdir, classifyRun(result, where, context));
}
