import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { objectTooLarge } from '../failure.ts';
import { MAX_OBJECT_BYTES } from '../limits.ts';
import { type GitObject, type ObjectType, OID } from '../objects.ts';
import { killGroup, spawnGit } from './run.ts';

interface Request {
  oid: string;
  /** Only the header is asked (`info`): resolved with the type and size, no content. */
  info: boolean;
  /** Called with the request's own id: a stream's answers can come from two processes (see `renew`). */
  resolve(found: GitObject | Header | undefined, oid: string): void;
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
  /**
   * The running process answers what it was asked, then ends; what is asked from now on goes to a new one, which
   * sees the packs as they are now (git never reopens a pack that keeps its name, one rewritten by a repair).
   */
  renew(): void;
  /** Ends every process the reader started, once each answered what it was asked. */
  close(): Promise<void>;
}

/** A header line of `cat-file --batch` and `--batch-check`: id, type, size. */
export const HEADER = /^([0-9a-f]{40}) (commit|tree|blob|tag) (\d+)$/;

/**
 * Asks `send` for `oids` in order, `inFlight` at once, handing each answer to `each` as it arrives (no promise per
 * object; after a `renew` the old process's answers may come after the new one's); rejects with the first
 * failure, `each`'s own included, after which `each` is not called again.
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
    // One pair of handlers for the whole stream: each answer comes with its request's id.
    const answer = (found: GitObject | Header | undefined, oid: string) => {
      if (failed) return;
      try {
        each(oid, found as T | undefined);
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
        request.resolve(undefined, request.oid);
        continue;
      }
      const header = HEADER.exec(line);
      if (header === null || header[1] !== request.oid)
        return new Error(`git cat-file answered ${JSON.stringify(line.slice(0, 100))} for ${request.oid}`);
      request.header = { type: header[2] as ObjectType, size: Number(header[3]) };
      if (request.info) {
        pending.shift();
        request.resolve(request.header, request.oid);
        continue;
      }
      if (request.header.size > MAX_OBJECT_BYTES) return request;
    }
    // The content, then one LF.
    if (output.buffered < request.header.size + 1) return 'waiting';
    const data = output.take(request.header.size, 1);
    pending.shift();
    request.resolve({ type: request.header.type, data } satisfies GitObject, request.oid);
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

/** One `cat-file` process: what it was asked and has not answered, and what it wrote that no answer took yet. */
interface Run {
  child: ChildProcessWithoutNullStreams;
  pending: Request[];
  output: ReturnType<typeof chunkQueue>;
  /** The tail of what the process said on stderr, for the error when it ends. */
  stderr: string;
  /** Requests queued this turn of the event loop, written together. */
  unsent: string;
  /** Asked nothing more: its stdin ends once what was queued is written, and it ends once it answered. */
  ending: boolean;
  /** Killed, or ended: nothing it says is heard any more. */
  gone: boolean;
  /** Resolved once it ended and its output was all heard. */
  closed: Promise<void>;
}

/** One reader: how to start its process, the one asked now, and those still answering before they end. */
interface Reader {
  git: string;
  gitdir: string;
  vars: Record<string, string> | undefined;
  commands: boolean;
  maxMemoryBytes: number | undefined;
  /** The process new requests go to; started on first use and again after one ends. */
  current: Run | undefined;
  /** Every process not yet ended, the current one included. */
  runs: Set<Run>;
  /** Ends the current process once nothing was asked of it for `idleMs`. */
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
    current: undefined,
    runs: new Set(),
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
    renew() {
      if (reader.current !== undefined) finish(reader, reader.current);
    },
    close: () => close(reader),
  };
}

/** `run` is heard no more and asked nothing more; returns the requests it had not answered. */
function drop(reader: Reader, run: Run): Request[] {
  run.gone = true;
  if (reader.current === run) reader.current = undefined;
  const unanswered = run.pending;
  run.pending = [];
  return unanswered;
}

function drain(reader: Reader, run: Run): void {
  const stopped = answer(run.pending, run.output);
  if (stopped === 'waiting') return;
  if (stopped === 'all answered') {
    (run.child.stdout as unknown as { unref(): void }).unref();
    if (run === reader.current) {
      clearTimeout(reader.idle);
      reader.idle = setTimeout(() => retire(reader, run), reader.idleMs).unref();
    }
    return;
  }
  killGroup(run.child);
  if (stopped instanceof Error) {
    for (const request of drop(reader, run)) request.reject(stopped);
    return;
  }
  // An object too large: its content is never read. This process goes (it would stream all of it), the other
  // requests are asked again of a new one.
  run.pending.shift();
  stopped.reject(objectTooLarge(`object ${stopped.oid}`, stopped.header!.size));
  for (const waiting of drop(reader, run)) sendRequest(reader, waiting);
}

function start(reader: Reader): Run {
  const { vars, maxMemoryBytes } = reader;
  const child = spawnCatFile(reader.git, reader.gitdir, reader.commands, { vars, maxMemoryBytes });
  let closed!: () => void;
  const run: Run = {
    child,
    pending: [],
    output: chunkQueue(),
    stderr: '',
    unsent: '',
    ending: false,
    gone: false,
    closed: new Promise((resolve) => (closed = resolve)),
  };
  reader.runs.add(run);
  child.stdout.on('data', (chunk: Buffer) => {
    if (run.gone) return;
    run.output.push(chunk);
    drain(reader, run);
  });
  child.stderr.on('data', (text: string) => (run.stderr = (run.stderr + text).slice(-4096)));
  const ended = (why: string) => {
    reader.runs.delete(run);
    closed();
    if (run.gone) return;
    const { stderr } = run;
    const error = new Error(
      `git cat-file ${why}${stderr === '' ? '' : `: ${stderr.trim().split('\n').pop()}`}`,
    );
    for (const request of drop(reader, run)) request.reject(error);
  };
  child.once('error', (error) => ended(`could not start (${error.message})`));
  // 'close', not 'exit': by then all it wrote was heard, so an ending process's last answers are not lost.
  child.once('close', (code, signal) => ended(`ended (${signal ?? `exit ${code}`})`));
  return run;
}

/**
 * Queues a request on the current process (started when there is none). Requests go in one write per turn of
 * the event loop: readers that ask again as each answer arrives still share a write.
 */
function sendRequest(reader: Reader, request: Request): void {
  clearTimeout(reader.idle);
  const run = (reader.current ??= start(reader));
  // Node stays running while an answer is awaited (drain lets go once none is).
  if (run.pending.length === 0) (run.child.stdout as unknown as { ref(): void }).ref();
  run.pending.push(request);
  if (run.unsent === '') setImmediate(() => flush(run));
  run.unsent += reader.commands
    ? `${request.info ? 'info' : 'contents'} ${request.oid}\n`
    : `${request.oid}\n`;
}

/** Writes what was queued this turn; a process asked nothing more has its stdin ended after it. */
function flush(run: Run): void {
  const { child } = run;
  if (!run.gone && child.exitCode === null && child.signalCode === null) {
    if (run.unsent !== '') child.stdin.write(run.unsent);
    if (run.ending) child.stdin.end();
  }
  run.unsent = '';
}

/** Asks nothing more of `run`: it answers what it was asked (what was queued is written first), then ends. */
function finish(reader: Reader, run: Run): void {
  if (reader.current === run) {
    reader.current = undefined;
    clearTimeout(reader.idle);
  }
  if (run.ending) return;
  run.ending = true;
  if (run.unsent === '') flush(run);
}

/** Ends an idle reader's process, unless it was asked something since or is gone already: the next read starts one. */
function retire(reader: Reader, run: Run): void {
  if (reader.current !== run || run.pending.length > 0 || run.unsent !== '') return;
  finish(reader, run);
}

function ask(reader: Reader, oid: string): Promise<GitObject | undefined> {
  if (!OID.test(oid)) return Promise.reject(new Error(`not an object id: ${JSON.stringify(oid)}`));
  return new Promise((resolve, reject) =>
    sendRequest(reader, { oid, info: false, resolve: resolve as Request['resolve'], reject }),
  );
}

async function close(reader: Reader): Promise<void> {
  if (reader.current !== undefined) finish(reader, reader.current);
  const runs = [...reader.runs];
  for (const run of runs) {
    // Waiting for the end must keep Node running (the process and its output are unref'd while idle).
    run.child.ref();
    (run.child.stdout as unknown as { ref(): void }).ref();
  }
  await Promise.all(runs.map((run) => run.closed));
}
