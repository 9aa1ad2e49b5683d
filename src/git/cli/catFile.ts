import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { objectTooLarge } from '../failure.ts';
import { MAX_OBJECT_BYTES } from '../limits.ts';
import { type GitObject, type ObjectType, OID } from '../objects.ts';
import { killGroup, spawnGit } from './run.ts';

interface Request {
  oid: string;
  /** Only the header is asked (`info`): resolved with the type and size, no content. */
  info: boolean;
  resolve(found: GitObject | Header | undefined): void;
  reject(error: Error): void;
  header?: Header;
}

interface Header {
  type: ObjectType;
  size: number;
}

export interface ObjectReader {
  read(oid: string): Promise<GitObject | undefined>;
  /**
   * Reads `oids` in order, at most `inFlight` asked at once, handing each answer to `each` as it arrives (no
   * promise per object); rejects with the first failure, after which `each` is not called again.
   */
  readEach(
    oids: readonly string[],
    inFlight: number,
    each: (oid: string, found: GitObject | undefined) => void,
  ): Promise<void>;
  /**
   * Headers (type and size) of many objects, content not inflated, handed over as `readEach` hands contents; only
   * through `--batch-command` (git 2.36).
   */
  headers?(
    oids: readonly string[],
    inFlight: number,
    each: (oid: string, found?: Header) => void,
  ): Promise<void>;
  close(): Promise<void>;
}

/** A header line of `cat-file --batch` and `--batch-check`: id, type, size. */
export const HEADER = /^([0-9a-f]{40}) (commit|tree|blob|tag) (\d+)$/;

/**
 * Asks `send` for `oids` in order, `inFlight` at once, handing each answer to `each` as it arrives (no promise per
 * object); rejects with the first failure, `each`'s own included, after which `each` is not called again.
 */
function streamed<T>(
  send: (request: Request) => void,
  oids: readonly string[],
  inFlight: number,
  info: boolean,
  each: (oid: string, found: T | undefined) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const bad = oids.find((oid) => !OID.test(oid));
    if (bad !== undefined) return reject(new Error(`not an object id: ${JSON.stringify(bad)}`));
    let asked = 0;
    let answered = 0;
    let failed = false;
    // One pair of handlers for the whole stream: the process answers requests in the order they were sent.
    const answer = (found: GitObject | Header | undefined) => {
      if (failed) return;
      try {
        each(oids[answered]!, found as T | undefined);
      } catch (error) {
        failed = true;
        return reject(error);
      }
      if (++answered === oids.length) resolve();
      else if (asked < oids.length) next();
    };
    const refuse = (error: Error) => {
      if (!failed) reject(error);
      failed = true;
    };
    const next = () => send({ oid: oids[asked++]!, info, resolve: answer, reject: refuse });
    if (oids.length === 0) return resolve();
    while (asked < Math.min(Math.max(1, inFlight), oids.length)) next();
  });
}

/** What a cat-file process wrote and no answer took yet: chunks as they came, copied only where an answer spans them. */
function chunkQueue() {
  const chunks: Buffer[] = [];
  let buffered = 0;

  /** Joins the front chunks until the first holds `bytes` (at least one more chunk is there): copies those only. */
  const join = (bytes: number) => {
    const parts: Buffer[] = [];
    let have = 0;
    while (have < bytes && chunks.length > 0) {
      const chunk = chunks[0]!;
      const used = Math.min(chunk.length, bytes - have);
      parts.push(used === chunk.length ? chunk : chunk.subarray(0, used));
      have += used;
      if (used === chunk.length) chunks.shift();
      else chunks[0] = chunk.subarray(used);
    }
    chunks.unshift(Buffer.concat(parts, have));
  };

  /** Takes `bytes` from the front and drops `after` more; small answers are views, not copies. */
  const take = (bytes: number, after: number): Buffer => {
    const used = bytes + after;
    if (chunks[0]!.length < used) join(used);
    const first = chunks[0]!;
    if (first.length > used) chunks[0] = first.subarray(used);
    else chunks.shift();
    buffered -= used;
    return first.subarray(0, bytes);
  };

  return {
    get buffered() {
      return buffered;
    },
    push(chunk: Buffer) {
      chunks.push(chunk);
      buffered += chunk.length;
    },
    take,
    /** The next line, without its LF, once all of it came; a header line is short, so the chunks are joined. */
    line(): string | undefined {
      while (chunks.length > 1 && chunks[0]!.indexOf(10) === -1) join(chunks[0]!.length + chunks[1]!.length);
      const newline = chunks[0]?.indexOf(10) ?? -1;
      return newline === -1 ? undefined : take(newline, 1).toString('latin1');
    },
  };
}

/**
 * Answers the requests at the front of `pending` (they were asked in order) from what `output` holds, removing each
 * it answers. Stops when an answer has not all come (`waiting`), when none is left, at a line that is no answer
 * to its request (an Error: the process cannot be trusted further), or at a content request whose object passes
 * MAX_OBJECT_BYTES (that request, still first in `pending`).
 */
function answer(
  pending: Request[],
  output: ReturnType<typeof chunkQueue>,
): 'waiting' | 'all answered' | Error | Request {
  while (pending.length > 0) {
    const request = pending[0]!;
    if (request.header === undefined) {
      const line = output.line();
      if (line === undefined) return 'waiting';
      if (line === `${request.oid} missing`) {
        pending.shift();
        request.resolve(undefined);
        continue;
      }
      const header = HEADER.exec(line);
      if (header === null || header[1] !== request.oid)
        return new Error(`git cat-file answered ${JSON.stringify(line.slice(0, 100))} for ${request.oid}`);
      request.header = { type: header[2] as ObjectType, size: Number(header[3]) };
      if (request.info) {
        pending.shift();
        request.resolve(request.header);
        continue;
      }
      if (request.header.size > MAX_OBJECT_BYTES) return request;
    }
    // The content, then one LF.
    if (output.buffered < request.header.size + 1) return 'waiting';
    const data = output.take(request.header.size, 1);
    pending.shift();
    request.resolve({ type: request.header.type, data } satisfies GitObject);
  }
  return 'all answered';
}

/**
 * How long a reader's process stays with nothing asked of it before it ends (it starts again on the next read):
 * a process of every repository ever read, kept for good, made a thousand sources a thousand git processes
 * (about 6 MiB each) and two thousand descriptors.
 */
export const CAT_FILE_IDLE_MS = 5_000;

/** Starts `cat-file --batch` (or `--batch-command`): while nothing is asked of it, it does not keep Node running. */
function spawnCatFile(
  git: string,
  gitdir: string,
  commands: boolean,
  bounds: { vars: Record<string, string> | undefined; maxMemoryBytes: number | undefined },
): ChildProcessWithoutNullStreams {
  const process = spawnGit(
    git,
    ['--git-dir', gitdir, 'cat-file', commands ? '--batch-command' : '--batch'],
    bounds,
  );
  process.unref();
  // The watcher's end keeps Node running no more than the process does.
  (process.stdio[3] as unknown as { unref(): void }).unref();
  process.stdin.on('error', () => undefined);
  (process.stdin as unknown as { unref(): void }).unref();
  process.stderr.setEncoding('utf8');
  (process.stderr as unknown as { unref(): void }).unref();
  return process;
}

/** One reader's state: how to start its process, the process running, and the requests it has not answered. */
interface Reader {
  git: string;
  gitdir: string;
  vars: Record<string, string> | undefined;
  commands: boolean;
  maxMemoryBytes: number | undefined;
  child: ChildProcessWithoutNullStreams | undefined;
  pending: Request[];
  output: ReturnType<typeof chunkQueue>;
  /** The tail of what the process said on stderr, for the error when it ends. */
  stderr: string;
  /** Requests queued this turn of the event loop, written together. */
  unsent: string;
  /** Ends the process once nothing was asked of it for `idleMs`. */
  idleMs: number;
  idle: NodeJS.Timeout | undefined;
}

/**
 * One long-lived `git cat-file --batch` per repository: requests are written as they come and answered in
 * order, so concurrent reads are pipelined through one process. With `commands` (git 2.36 or later) it is
 * `--batch-command`, which also answers headers alone (`info`). It is started on first use and again after it
 * ends; while nothing is asked it does not keep Node running, and after `idleMs` of that it ends.
 */
export function catFileReader(
  git: string,
  gitdir: string,
  vars?: Record<string, string>,
  commands = false,
  maxMemoryBytes?: number,
  idleMs = CAT_FILE_IDLE_MS,
): ObjectReader {
  const reader: Reader = {
    git,
    gitdir,
    vars,
    commands,
    maxMemoryBytes,
    child: undefined,
    pending: [],
    output: chunkQueue(),
    stderr: '',
    unsent: '',
    idleMs,
    idle: undefined,
  };
  const send = (request: Request) => sendRequest(reader, request);
  return {
    read: (oid) => ask(reader, oid),
    readEach: (oids, inFlight, each) => streamed(send, oids, inFlight, false, each),
    headers: commands
      ? (oids: readonly string[], inFlight: number, each: (oid: string, found?: Header) => void) =>
          streamed(send, oids, inFlight, true, each)
      : undefined,
    close: () => close(reader),
  };
}

/** Forgets the process, what it sent and what was still to be written; returns the requests not answered. */
function reset(reader: Reader): Request[] {
  const unanswered = reader.pending;
  reader.pending = [];
  reader.output = chunkQueue();
  reader.unsent = '';
  reader.child = undefined;
  return unanswered;
}

function fail(reader: Reader, error: Error): void {
  for (const request of reset(reader)) request.reject(error);
}

function drain(reader: Reader, process: ChildProcessWithoutNullStreams): void {
  const stopped = answer(reader.pending, reader.output);
  if (stopped === 'waiting') return;
  if (stopped === 'all answered') {
    (process.stdout as unknown as { unref(): void }).unref();
    clearTimeout(reader.idle);
    reader.idle = setTimeout(() => retire(reader, process), reader.idleMs).unref();
    return;
  }
  killGroup(process);
  if (stopped instanceof Error) {
    fail(reader, stopped);
    return;
  }
  // An object too large: its content is never read. This process goes (it would stream all of it), the other
  // requests are asked again of a new one.
  reader.pending.shift();
  stopped.reject(objectTooLarge(`object ${stopped.oid}`, stopped.header!.size));
  for (const waiting of reset(reader)) sendRequest(reader, waiting);
}

function start(reader: Reader): ChildProcessWithoutNullStreams {
  const { vars, maxMemoryBytes } = reader;
  const process = spawnCatFile(reader.git, reader.gitdir, reader.commands, { vars, maxMemoryBytes });
  // Only the current process is heard: one that was reset away (killed, replaced) says nothing more.
  process.stdout.on('data', (chunk: Buffer) => {
    if (reader.child !== process) return;
    reader.output.push(chunk);
    drain(reader, process);
  });
  process.stderr.on('data', (text: string) => (reader.stderr = (reader.stderr + text).slice(-4096)));
  const ended = (why: string) => {
    if (reader.child !== process) return;
    const { stderr } = reader;
    fail(
      reader,
      new Error(`git cat-file ${why}${stderr === '' ? '' : `: ${stderr.trim().split('\n').pop()}`}`),
    );
  };
  process.once('error', (error) => ended(`could not start (${error.message})`));
  process.once('exit', (code, signal) => ended(`ended (${signal ?? `exit ${code}`})`));
  return process;
}

/**
 * Queues a request on the running process (started when there is none). Requests go in one write per turn of
 * the event loop: readers that ask again as each answer arrives still share a write.
 */
function sendRequest(reader: Reader, request: Request): void {
  clearTimeout(reader.idle);
  reader.child ??= start(reader);
  // Node stays running while an answer is awaited (drain lets go once none is).
  if (reader.pending.length === 0) (reader.child.stdout as unknown as { ref(): void }).ref();
  reader.pending.push(request);
  if (reader.unsent === '') {
    const to = reader.child;
    setImmediate(() => {
      // A batch for a process that is gone was dropped with it (reset): a newer batch is not this one's.
      if (to !== reader.child) return;
      if (to.exitCode === null && to.signalCode === null) to.stdin.write(reader.unsent);
      reader.unsent = '';
    });
  }
  reader.unsent += reader.commands
    ? `${request.info ? 'info' : 'contents'} ${request.oid}\n`
    : `${request.oid}\n`;
}

/** Ends an idle reader's process, unless it was asked something since or is gone already: the next read starts one. */
function retire(reader: Reader, process: ChildProcessWithoutNullStreams): void {
  if (reader.child !== process || reader.pending.length > 0 || reader.unsent !== '') return;
  reset(reader);
  process.stdin.end();
}

function ask(reader: Reader, oid: string): Promise<GitObject | undefined> {
  if (!OID.test(oid)) return Promise.reject(new Error(`not an object id: ${JSON.stringify(oid)}`));
  return new Promise((resolve, reject) =>
    sendRequest(reader, { oid, info: false, resolve: resolve as Request['resolve'], reject }),
  );
}

async function close(reader: Reader): Promise<void> {
  clearTimeout(reader.idle);
  // A batch queued this turn is written first (its callback was queued before this one): it is answered.
  if (reader.unsent !== '') await new Promise((resolve) => setImmediate(resolve));
  const process = reader.child;
  if (process === undefined || process.exitCode !== null || process.signalCode !== null) return;
  const exited = new Promise((resolve) => process.once('exit', resolve));
  // Waiting for the exit must keep Node running (the process is unref'd while idle).
  process.ref();
  process.stdin.end();
  await exited;
}
