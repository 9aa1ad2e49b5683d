import { promises as fsp } from 'node:fs';
import { redact, rememberSecret } from '../../shared/redact.ts';
import { messageOf } from '../../shared/text.ts';
import { cleanedUp, packNames, removePacksSince } from '../cleanup.ts';
import { GitError } from '../errors.ts';
import { type FailureFacts, transportFailure } from '../failure.ts';
import {
  DEFAULT_DEADLINE_MS,
  DEFAULT_HTTP_TIMEOUT_MS,
  CLI_READ_AHEAD,
  DEFAULT_GIT_MEMORY_BYTES,
  DEFAULT_MAX_FETCH_BYTES,
  DEFAULT_MAX_FETCH_OBJECTS,
  MAX_OBJECT_BYTES,
} from '../limits.ts';
import { OID } from '../objects.ts';
import {
  isRepository,
  type Remote,
  type RemoteRef,
  type Repository,
  type TransferOptions,
  wantedRef,
} from '../repository.ts';
import { urlOrigin, protocolOf, redactUrl } from '../url.ts';
import { catFileReader, HEADER, type ObjectReader } from './catFile.ts';
import { classifyRun, type RunContext } from './classify.ts';
import { lsTree } from './lsTree.ts';
import { parseProgress } from './progress.ts';
import { fetchBounds } from './fetchBounds.ts';
import { runGit, type RunOptions, type GitRunResult } from './run.ts';

/** How much longer than curl's own low-speed limit the watchdog waits before it stops a silent HTTP(S) child. */
const WATCHDOG_MARGIN_MS = 10_000;

/** Settings of the git binary shared by every repository: its path, and the proxy for HTTP(S). */
export interface CliSettings {
  git: string;
  /** More variables for every child (tests); the user's environment passes only through `childEnv`'s list. */
  vars?: Record<string, string>;
  /** git's `http.proxy`; may hold credentials (never logged). */
  proxy?: string;
  /** The git has `cat-file --batch-command` (2.36 or later): headers come from the reader's own process. */
  batchCommand?: boolean;
  /** The address space each git process may take (git.maxMemory); absent: DEFAULT_GIT_MEMORY_BYTES. */
  maxMemoryBytes?: number;
}

/**
 * How one remote is reached: the URL and credentials only in the child's environment (never in argv, which any
 * local user can read), the source's own protocol the only one allowed (an http source may be upgraded to https,
 * never the other way: curl refuses a redirect to a protocol not allowed), an idle timeout and a deadline.
 * Credentials are scoped to the source's origin: after a redirect to another origin git asks no helper of ours,
 * and curl sends no credentials to another host, port or scheme.
 */
function transport(remote: Remote, settings: CliSettings): RunOptions & { context: RunContext } {
  const protocol = protocolOf(remote.url);
  if (protocol === undefined)
    throw new GitError('source-unsupported', `${redactUrl(remote.url)}: not an https, http, ssh or file URL`);
  const timeoutMs = remote.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  const deadlineMs = remote.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const config: Array<[string, string]> = [['remote.origin.url', remote.url]];
  const vars: Record<string, string> = {};
  const secrets: string[] = [];
  const web = protocol === 'http' || protocol === 'https';
  const follow = remote.redirects !== 'refuse';
  if (web) {
    // curl gives up when fewer than 1 byte/s arrive for this long (whole seconds); the watchdog covers the rest.
    config.push(
      ['http.lowSpeedLimit', '1'],
      ['http.lowSpeedTime', String(Math.max(1, Math.ceil(timeoutMs / 1000)))],
      // git's default: only a transfer's first request follows redirects (at most 20), and the rest go where it
      // landed; `false` follows none.
      ['http.followRedirects', follow ? 'initial' : 'false'],
    );
    if (settings.proxy !== undefined) {
      config.push(['http.proxy', settings.proxy]);
      secrets.push(settings.proxy);
      rememberSecret(settings.proxy);
    }
    const origin = urlOrigin(remote.url)!;
    if (remote.token !== undefined) {
      // The token reaches git as an environment variable read by a helper scoped to the source's own origin.
      vars['SKILLPIN_GIT_TOKEN'] = remote.token;
      secrets.push(remote.token);
      rememberSecret(remote.token, 'x-access-token');
      config.push([
        `credential.${origin}.helper`,
        '!f() { test "$1" = get && printf "username=x-access-token\\npassword=%s\\n" "$SKILLPIN_GIT_TOKEN"; }; f',
      ]);
    } else if (remote.credentialHelper !== undefined)
      config.push([`credential.${origin}.helper`, remote.credentialHelper]);
  }
  // Over HTTP(S) curl watches the bytes; a child silent for longer than that (a command like ls-remote prints
  // only at its end) is stopped by the watchdog with a margin. Over SSH the watchdog is the only guard.
  const idleTimeoutMs = web ? timeoutMs + WATCHDOG_MARGIN_MS : timeoutMs;
  return {
    protocols: protocol === 'http' ? ['http', 'https'] : [protocol],
    config,
    vars,
    idleTimeoutMs,
    deadlineMs,
    context: {
      secrets,
      timeoutMs: idleTimeoutMs,
      deadlineMs,
      followRedirects: follow,
      memoryBytes: settings.maxMemoryBytes ?? DEFAULT_GIT_MEMORY_BYTES,
    },
  };
}

type Git = (args: string[], options?: RunOptions) => Promise<GitRunResult>;

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

/** A repository read through a long-lived `git cat-file --batch`, with the git binary for refs and the network. */
export async function openCliRepository(
  gitdir: string,
  store: boolean,
  settings: CliSettings,
): Promise<Repository> {
  const memory = settings.maxMemoryBytes === undefined ? {} : { maxMemoryBytes: settings.maxMemoryBytes };
  // Every child still running, and the signal that kills them all when the repository is closed.
  const running = new Set<Promise<GitRunResult>>();
  let closing = new AbortController();
  const git = (args: string[], options: RunOptions = {}) => {
    const run = runGit(settings.git, ['--git-dir', gitdir, ...args], {
      ...options,
      ...memory,
      closing: closing.signal,
      vars: { ...settings.vars, ...options.vars },
    });
    running.add(run);
    const forget = () => running.delete(run);
    run.then(forget, forget);
    return run;
  };
  if (store && !(await isRepository(gitdir))) {
    await fsp.mkdir(gitdir, { recursive: true });
    const made = await runGit(settings.git, ['init', '--quiet', '--bare', gitdir], {
      ...memory,
      vars: settings.vars ?? {},
    });
    if (made.code !== 0)
      throw new GitError('source-fetch-failed', 'the store in dataDir could not be created', {
        log: `git init ${gitdir}: ${redact(made.stderr.trim())}`,
      });
  }
  const newReader = () =>
    catFileReader(settings.git, gitdir, settings.vars, settings.batchCommand, settings.maxMemoryBytes);
  let objects = newReader();

  const { checkedSizes, objectSizes } = sizeReaders(git, () => objects);
  const local: RunContext = { memoryBytes: settings.maxMemoryBytes ?? DEFAULT_GIT_MEMORY_BYTES };

  const fetch = async (
    remote: Remote,
    args: string[],
    what: string,
    options: TransferOptions,
    more: { input?: string; config?: Array<[string, string]> } = {},
  ) => {
    const { context, ...run } = transport(remote, settings);
    const where = `${what} from ${redactUrl(remote.url)}`;
    // A partial clone's packs are marked as coming from a promisor remote; the configuration that says so is
    // given to the fetch only, so a reader never tries to fetch a missing object on its own.
    run.config = [
      ...run.config!,
      ['extensions.partialClone', 'origin'],
      ['remote.origin.promisor', 'true'],
      ['remote.origin.partialclonefilter', 'blob:none'],
      // Every transfer stays one pack (git would explode small ones into loose objects): what came is visible.
      ['transfer.unpackLimit', '1'],
      // index-pack streams larger objects (the blobs over MAX_OBJECT_BYTES the transfer's size rule keeps) to disk
      // instead of holding them whole (its default is 512 MiB).
      ['core.bigFileThreshold', String(MAX_OBJECT_BYTES)],
      ...(more.config ?? []),
    ];
    const before = await packNames(gitdir);
    const bounds = fetchBounds(
      gitdir,
      before,
      remote.maxFetchBytes ?? DEFAULT_MAX_FETCH_BYTES,
      remote.maxFetchObjects ?? DEFAULT_MAX_FETCH_OBJECTS,
    );
    let result: GitRunResult;
    let passed: FailureFacts | undefined;
    try {
      result = await git(
        ['fetch', '--progress', '--no-tags', '--no-write-fetch-head', '--recurse-submodules=no', ...args],
        {
          ...run,
          signal: bounds.signal,
          ...(more.input === undefined ? {} : { input: more.input }),
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
      throw await cleanedUp(gitdir, transportFailure('source-too-large', where, passed));
    }
    if (result.code !== 0 || result.stopped !== undefined)
      throw await cleanedUp(gitdir, classifyRun(result, where, context));
  };

  return {
    gitdir,
    backend: 'cli',
    partial: true,
    readObject: (oid) => objects.read(oid),
    readEach: (oids, each) => objects.readEach(oids, CLI_READ_AHEAD, each),
    async missingObjects(oids) {
      // Asked of a new process: whether the store holds them now, not whether the reader still can.
      const sizes = await checkedSizes(oids);
      return oids.filter((_, i) => sizes[i] === undefined);
    },
    objectSizes,
    listTree: (commit) => lsTree(git, objectSizes, commit),
    async objectsWithPrefix(prefix) {
      if (!/^[0-9a-f]{4,40}$/.test(prefix)) return [];
      const result = await git(['rev-parse', `--disambiguate=${prefix}`]);
      return result.stdout
        .toString('latin1')
        .split('\n')
        .filter((line) => OID.test(line));
    },
    async readRef(name) {
      if (name === 'HEAD') {
        const head = await git(['rev-parse', '--verify', '--quiet', 'HEAD']);
        const oid = head.stdout.toString('latin1').trim();
        return head.code === 0 && OID.test(oid) ? oid : undefined;
      }
      // for-each-ref also lists refs below `name` (refs/heads/main/x): only the exact name counts.
      const result = await git(['for-each-ref', '--format=%(objectname) %(refname)', '--', name]);
      const line = result.stdout
        .toString('utf8')
        .split('\n')
        .find((entry) => entry.slice(41) === name);
      return line?.slice(0, 40);
    },
    async listRefs(prefixes) {
      const result = await git(['for-each-ref', '--format=%(objectname) %(refname)', '--', ...prefixes]);
      if (result.code !== 0) throw classifyRun(result, 'listing the refs', local);
      return result.stdout
        .toString('utf8')
        .split('\n')
        .flatMap((line) =>
          OID.test(line.slice(0, 40)) ? [{ name: line.slice(41), oid: line.slice(0, 40) }] : [],
        )
        .filter((ref) => wantedRef(prefixes, ref.name));
    },
    async writeRef(name, oid) {
      const result = await git(['update-ref', '--no-deref', name, oid]);
      if (result.code !== 0) throw classifyRun(result, `writing ${name}`, local);
    },
    async deleteRef(name) {
      const result = await git(['update-ref', '--no-deref', '-d', name]);
      if (result.code !== 0) throw classifyRun(result, `deleting ${name}`, local);
    },
    async listRemoteRefs(remote, names) {
      const { context, ...run } = transport(remote, settings);
      // ls-remote matches its patterns against peeled entries too (`refs/tags/v1^{}`): ask for those as well.
      // A name ending in "/" is every ref below it: a glob, which matches the peeled entries as well.
      const patterns = names.flatMap((name) => (name.endsWith('/') ? [`${name}*`] : [name, `${name}^{}`]));
      const result = await git(['ls-remote', 'origin', ...patterns], run);
      if (result.code !== 0)
        throw classifyRun(result, `listing the refs of ${redactUrl(remote.url)}`, context);
      const refs = new Map<string, RemoteRef>();
      for (const line of result.stdout.toString('utf8').split('\n')) {
        const match = /^([0-9a-f]{40})\t(.+?)(\^\{\})?$/.exec(line);
        if (match === null) continue;
        const [, oid, name, peeled] = match as unknown as [string, string, string, string | undefined];
        const entry = refs.get(name) ?? { name, oid };
        if (peeled === undefined) entry.oid = oid;
        else entry.peeled = oid;
        refs.set(name, entry);
      }
      return [...refs.values()].filter((ref) => wantedRef(names, ref.name));
    },
    async fetch(remote, commit, options) {
      // Every pin is sent as a have, so only what the store lacks comes over.
      await fetch(
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
    },
    async fetchBlobs(remote, oids, options) {
      // As git's own lazy fetch of a partial clone does: ids on stdin, no negotiation.
      await fetch(
        remote,
        ['--filter=blob:none', '--stdin', 'origin'],
        `fetching ${oids.length} blob(s)`,
        options,
        { input: `${oids.join('\n')}\n`, config: [['fetch.negotiationAlgorithm', 'noop']] },
      ).catch((error: unknown) => {
        if (error instanceof GitError && error.code === 'source-commit-not-found')
          throw new GitError(
            'source-fetch-failed',
            `${error.message} (the server filtered blobs but refuses to send them by id)`,
          );
        throw error;
      });
    },
    refresh() {
      // git never reopens a pack that keeps its name (one rewritten by a repair): a new reader does. The old one
      // answers what it was asked, then ends.
      const old = objects;
      objects = newReader();
      void old.close().catch(() => undefined);
    },
    async close() {
      // Every child it started ends, with whatever each started (its process group), before close returns.
      closing.abort();
      closing = new AbortController();
      await Promise.allSettled([...running, objects.close()]);
    },
  };
}
