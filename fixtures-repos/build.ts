/**
 * Builds the fixture git repositories described under fixtures-repos/ into
 * bare repositories with deterministic commit SHAs.
 *
 * Each fixtures-repos/<name>/repo.yaml lists commits whose trees are plain
 * folders next to it, plus what a folder cannot hold, declared in the YAML:
 * symlinks, submodules, executable bits, generated files (many files or big
 * ones, without storing them) and raw entries (paths given as percent-encoded
 * bytes, content as text or base64). The history is streamed into
 * `git fast-import`, without a work tree, with a fixed author/committer and
 * each commit's own UTC date, and with every user/system git setting shut out,
 * so the SHAs are identical on every machine. See fixtures-repos/README.md for
 * the format.
 *
 * CLI: npx tsx fixtures-repos/build.ts [outDir] [name...]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';

/** Absolute path of the fixtures-repos/ folder. */
export const FIXTURES_ROOT: string = path.dirname(fileURLToPath(import.meta.url));

/** Where the CLI builds by default: <project root>/.skillpin/fixtures. */
export const DEFAULT_OUT_DIR: string = path.resolve(FIXTURES_ROOT, '..', '.skillpin', 'fixtures');

export interface BuiltFixture {
  name: string;
  /** Absolute path of the bare repository, outDir/<name>.git. */
  gitdir: string;
  /** Commit id from repo.yaml -> 40-hex commit SHA. */
  commits: Record<string, string>;
  /** Full ref name -> the object the ref stores (a tag object's SHA for annotated tags). */
  refs: Record<string, string>;
  /** Full ref name -> the commit SHA it resolves to (annotated tags peeled). */
  peeled: Record<string, string>;
  /** The symbolic ref HEAD points to, e.g. refs/heads/main. */
  head: string;
}

const AUTHOR = 'skillpin fixtures <fixtures@skillpin.invalid>';
const BUILD_REF = 'refs/skillpin-build/tmp';
const SHA_RE = /^[0-9a-f]{40}$/;
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const REF_RE = /^refs\/[A-Za-z0-9._/-]+$/;

// ---------------------------------------------------------------------------
// repo.yaml

interface CommitSpec {
  id: string;
  /** Absolute path of the tree folder, or null for a commit without plain files. */
  treeDir: string | null;
  message: string;
  /** Seconds since the epoch (UTC). */
  time: number;
  parents: string[];
  symlinks: Record<string, string>;
  submodules: Record<string, string>;
  executable: string[];
  generate: GenerateSpec[];
  raw: RawSpec[];
}

/** `generate:` item: `count` files (or one) at `path` with `{i}` expanded, holding `content` or `size` filler bytes. */
interface GenerateSpec {
  /** Path template; holds `{i}` exactly when `count` was given. */
  path: string;
  count: number | null;
  content: { kind: 'text'; text: string } | { kind: 'bytes'; bytes: Buffer } | { kind: 'fill'; size: number };
}

/** `raw:` item: one regular file whose path is given as percent-encoded bytes. */
interface RawSpec {
  /** The path as written in repo.yaml (for messages). */
  written: string;
  /** The decoded path bytes. */
  bytes: Buffer;
  content: Buffer;
  executable: boolean;
}

type RefSpec =
  | { kind: 'direct'; target: string }
  | { kind: 'annotated'; target: string; message: string; time: number | null };

interface RepoSpec {
  name: string;
  head: string;
  commits: CommitSpec[];
  refs: Map<string, RefSpec>;
}

class SpecError extends Error {}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function expectKeys(where: string, obj: Record<string, unknown>, allowed: string[]): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k))
      throw new SpecError(`${where}: unknown key "${k}" (allowed: ${allowed.join(', ')})`);
  }
}

function parseDate(where: string, v: unknown): number {
  const s = v instanceof Date ? v.toISOString() : v;
  if (typeof s !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(s)) {
    throw new SpecError(`${where}: date must be an ISO 8601 UTC string like "2024-03-01T09:00:00Z"`);
  }
  const ms = Date.parse(s);
  if (!Number.isFinite(ms) || ms % 1000 !== 0)
    throw new SpecError(`${where}: invalid date "${s}" (whole seconds only)`);
  return ms / 1000;
}

function parseMessage(where: string, v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '')
    throw new SpecError(`${where}: message must be a non-empty string`);
  // Normalised like `git commit` does: no trailing whitespace, one final newline.
  return v.replace(/\s+$/, '') + '\n';
}

/** Validates a tree path: relative, "/"-separated, no empty, ".", ".." or ".git" components. NFC-normalised. */
function checkPath(where: string, p: string): string {
  const n = p.normalize('NFC');
  const parts = n.split('/');
  if (
    n === '' ||
    parts.some((c) => c === '' || c === '.' || c === '..' || c.toLowerCase() === '.git') ||
    /[\0\n]/.test(n)
  ) {
    throw new SpecError(`${where}: invalid path "${p}"`);
  }
  return n;
}

function stringMap(where: string, v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isRecord(v)) throw new SpecError(`${where}: must be a mapping`);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string' || val === '')
      throw new SpecError(`${where}.${k}: must be a non-empty string`);
    out[checkPath(where, k)] = val;
  }
  return out;
}

function listOf(where: string, v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new SpecError(`${where}: must be a list`);
  return v;
}

/** Largest `count` and `size` accepted, to catch typos before they fill the disk. */
const MAX_GENERATE_COUNT = 100_000;
const MAX_GENERATE_SIZE = 1024 * 1024 * 1024;

/** File content given as exactly one of `content` (UTF-8 text) or `contentBase64` (bytes), or also `size` when allowed. */
function parseContent(
  where: string,
  v: Record<string, unknown>,
  allowSize: boolean,
): GenerateSpec['content'] {
  const given = ['content', 'contentBase64', ...(allowSize ? ['size'] : [])].filter(
    (k) => v[k] !== undefined,
  );
  if (given.length !== 1) {
    throw new SpecError(
      `${where}: give exactly one of ${allowSize ? 'content, contentBase64 or size' : 'content or contentBase64'}`,
    );
  }
  if (v.content !== undefined) {
    if (typeof v.content !== 'string') throw new SpecError(`${where}: content must be a string (quote it)`);
    return { kind: 'text', text: v.content };
  }
  if (v.contentBase64 !== undefined) {
    const b64 = typeof v.contentBase64 === 'string' ? v.contentBase64.replace(/\s+/g, '') : null;
    if (b64 === null || b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) {
      throw new SpecError(`${where}: contentBase64 must be standard padded base64`);
    }
    const bytes = Buffer.from(b64, 'base64');
    if (bytes.toString('base64') !== b64)
      throw new SpecError(`${where}: contentBase64 is not canonical base64`);
    return { kind: 'bytes', bytes };
  }
  if (typeof v.size !== 'number' || !Number.isInteger(v.size) || v.size < 0 || v.size > MAX_GENERATE_SIZE) {
    throw new SpecError(`${where}: size must be a whole number of bytes from 0 to ${MAX_GENERATE_SIZE}`);
  }
  return { kind: 'fill', size: v.size };
}

function parseGenerate(where: string, g: unknown): GenerateSpec {
  if (!isRecord(g)) throw new SpecError(`${where}: must be a mapping`);
  expectKeys(where, g, ['path', 'count', 'content', 'contentBase64', 'size']);
  if (typeof g.path !== 'string') throw new SpecError(`${where}: path must be a string`);
  let count: number | null = null;
  if (g.count !== undefined) {
    if (
      typeof g.count !== 'number' ||
      !Number.isInteger(g.count) ||
      g.count < 1 ||
      g.count > MAX_GENERATE_COUNT
    ) {
      throw new SpecError(`${where}: count must be a whole number from 1 to ${MAX_GENERATE_COUNT}`);
    }
    if (!g.path.includes('{i}')) throw new SpecError(`${where}: a path with count must hold "{i}"`);
    count = g.count;
  } else if (g.path.includes('{i}')) {
    throw new SpecError(`${where}: "{i}" in the path needs a count`);
  }
  checkPath(where, g.path.replaceAll('{i}', '0'));
  return { path: g.path, count, content: parseContent(where, g, true) };
}

/**
 * Percent-decodes a raw path to bytes: "%XX" (two hex digits) is the byte 0xXX, every other
 * character stands for its UTF-8 bytes; a literal "%" is written "%25".
 */
function decodeRawPath(written: string): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  while (i < written.length) {
    const pct = written.indexOf('%', i);
    const end = pct === -1 ? written.length : pct;
    if (end > i) out.push(Buffer.from(written.slice(i, end), 'utf8'));
    if (pct === -1) break;
    const hex = written.slice(pct + 1, pct + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex))
      throw new SpecError(`"%" must be followed by two hex digits (write "%25" for "%")`);
    out.push(Buffer.from([parseInt(hex, 16)]));
    i = pct + 3;
  }
  return Buffer.concat(out);
}

function parseRaw(where: string, r: unknown): RawSpec {
  if (!isRecord(r)) throw new SpecError(`${where}: must be a mapping`);
  expectKeys(where, r, ['path', 'content', 'contentBase64', 'executable']);
  if (typeof r.path !== 'string') throw new SpecError(`${where}: path must be a string`);
  let bytes: Buffer;
  try {
    bytes = decodeRawPath(r.path);
  } catch (e) {
    throw new SpecError(`${where}: path "${r.path}": ${(e as Error).message}`);
  }
  // Byte-level checks: the same component rules as plain paths, and no NUL (a tree cannot hold one).
  const components = bytes.toString('latin1').split('/');
  if (
    bytes.length === 0 ||
    bytes.includes(0) ||
    components.some((c) => c === '' || c === '.' || c === '..' || c.toLowerCase() === '.git')
  ) {
    throw new SpecError(`${where}: invalid path "${r.path}"`);
  }
  if (r.executable !== undefined && typeof r.executable !== 'boolean')
    throw new SpecError(`${where}: executable must be true or false`);
  const content = parseContent(where, r, false);
  return {
    written: r.path,
    bytes,
    content:
      content.kind === 'text'
        ? Buffer.from(content.text, 'utf8')
        : content.kind === 'bytes'
          ? content.bytes
          : Buffer.alloc(0),
    executable: r.executable === true,
  };
}

export async function loadRepoSpec(name: string): Promise<RepoSpec> {
  const dir = path.join(FIXTURES_ROOT, name);
  const file = path.join(dir, 'repo.yaml');
  const raw: unknown = parseYaml(await fs.readFile(file, 'utf8'));
  const w = `${name}/repo.yaml`;
  if (!isRecord(raw)) throw new SpecError(`${w}: must be a mapping`);
  expectKeys(w, raw, ['head', 'commits', 'refs']);

  if (!Array.isArray(raw.commits) || raw.commits.length === 0)
    throw new SpecError(`${w}: commits must be a non-empty list`);
  const commits: CommitSpec[] = [];
  const ids = new Set<string>();
  raw.commits.forEach((c: unknown, i: number) => {
    const cw = `${w}: commits[${i}]`;
    if (!isRecord(c)) throw new SpecError(`${cw}: must be a mapping`);
    expectKeys(cw, c, [
      'id',
      'tree',
      'message',
      'date',
      'parents',
      'symlinks',
      'submodules',
      'executable',
      'generate',
      'raw',
    ]);
    if (typeof c.id !== 'string' || !ID_RE.test(c.id)) throw new SpecError(`${cw}: id must match ${ID_RE}`);
    if (ids.has(c.id)) throw new SpecError(`${cw}: duplicate id "${c.id}"`);
    let treeDir: string | null = null;
    if (c.tree !== undefined && c.tree !== null) {
      if (typeof c.tree !== 'string' || !ID_RE.test(c.tree))
        throw new SpecError(`${cw}: tree must be a folder name next to repo.yaml`);
      treeDir = path.join(dir, c.tree);
      if (!existsSync(treeDir)) throw new SpecError(`${cw}: tree folder ${name}/${c.tree} does not exist`);
    }
    let parents: string[];
    if (c.parents === undefined) {
      const prev = commits[commits.length - 1];
      parents = prev ? [prev.id] : [];
    } else {
      if (!Array.isArray(c.parents) || !c.parents.every((p): p is string => typeof p === 'string')) {
        throw new SpecError(`${cw}: parents must be a list of earlier commit ids`);
      }
      parents = c.parents;
    }
    for (const p of parents)
      if (!ids.has(p)) throw new SpecError(`${cw}: parent "${p}" is not an earlier commit`);
    const symlinks = stringMap(`${cw}.symlinks`, c.symlinks);
    const submodules = stringMap(`${cw}.submodules`, c.submodules);
    for (const [p, sha] of Object.entries(submodules)) {
      if (!SHA_RE.test(sha)) throw new SpecError(`${cw}.submodules.${p}: must be a 40-hex lowercase SHA`);
    }
    let executable: string[] = [];
    if (c.executable !== undefined && c.executable !== null) {
      if (!Array.isArray(c.executable) || !c.executable.every((p): p is string => typeof p === 'string')) {
        throw new SpecError(`${cw}: executable must be a list of paths`);
      }
      executable = c.executable.map((p) => checkPath(`${cw}.executable`, p));
    }
    const generate = listOf(`${cw}.generate`, c.generate).map((g, j) =>
      parseGenerate(`${cw}.generate[${j}]`, g),
    );
    const rawEntries = listOf(`${cw}.raw`, c.raw).map((r, j) => parseRaw(`${cw}.raw[${j}]`, r));
    ids.add(c.id);
    commits.push({
      id: c.id,
      treeDir,
      message: parseMessage(cw, c.message),
      time: parseDate(cw, c.date),
      parents,
      symlinks,
      submodules,
      executable,
      generate,
      raw: rawEntries,
    });
  });

  if (!isRecord(raw.refs) || Object.keys(raw.refs).length === 0)
    throw new SpecError(`${w}: refs must be a non-empty mapping`);
  const refs = new Map<string, RefSpec>();
  for (const [ref, v] of Object.entries(raw.refs)) {
    const rw = `${w}: refs.${ref}`;
    if (!REF_RE.test(ref) || ref.startsWith(BUILD_REF) || /\.\.|\/\/|\/$|\.lock$|\/\./.test(ref)) {
      throw new SpecError(`${rw}: invalid ref name`);
    }
    if (typeof v === 'string') {
      if (!ids.has(v)) throw new SpecError(`${rw}: unknown commit "${v}"`);
      refs.set(ref, { kind: 'direct', target: v });
    } else if (isRecord(v)) {
      expectKeys(rw, v, ['tag', 'message', 'date']);
      if (!ref.startsWith('refs/tags/'))
        throw new SpecError(`${rw}: annotated tags must live under refs/tags/`);
      if (typeof v.tag !== 'string' || !ids.has(v.tag))
        throw new SpecError(`${rw}: tag must name a commit id`);
      refs.set(ref, {
        kind: 'annotated',
        target: v.tag,
        message: parseMessage(rw, v.message),
        time: v.date === undefined ? null : parseDate(rw, v.date),
      });
    } else {
      throw new SpecError(`${rw}: must be a commit id or {tag, message, date?}`);
    }
  }
  if (typeof raw.head !== 'string' || !refs.has(raw.head) || !raw.head.startsWith('refs/heads/')) {
    throw new SpecError(`${w}: head must be one of the refs/heads/* refs`);
  }
  return { name, head: raw.head, commits, refs };
}

/** Names of all fixture repositories (folders of FIXTURES_ROOT holding a repo.yaml), sorted. */
export async function listFixtures(): Promise<string[]> {
  const entries = await fs.readdir(FIXTURES_ROOT, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory() && existsSync(path.join(FIXTURES_ROOT, e.name, 'repo.yaml')))
    .map((e) => e.name)
    .sort();
}

// ---------------------------------------------------------------------------
// fast-import stream

/**
 * Tree paths are kept as "binary strings": one char per byte (latin1), so raw paths that are not
 * UTF-8 fit next to ordinary ones, and comparing two keys compares their bytes.
 */
type PathKey = string;
const keyOf = (p: string): PathKey => Buffer.from(p, 'utf8').toString('latin1');
const showKey = (k: PathKey): string => JSON.stringify(Buffer.from(k, 'latin1').toString('utf8'));

type EntrySource =
  | { kind: 'disk'; abs: string }
  | { kind: 'bytes'; bytes: Buffer }
  | { kind: 'fill'; size: number }
  | { kind: 'gitlink'; sha: string };

interface PlannedEntry {
  mode: '100644' | '100755' | '120000' | '160000';
  source: EntrySource;
}

/** Every regular file below dir: path relative to dir ("/" separators, NFC) -> absolute path on disk. */
async function readTree(dir: string, where: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  async function walk(abs: string, rel: string): Promise<void> {
    const entries = await fs.readdir(abs, { withFileTypes: true });
    for (const e of entries) {
      const a = path.join(abs, e.name);
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) await walk(a, r);
      else if (e.isFile()) {
        const p = checkPath(where, r);
        if (out.has(p)) throw new SpecError(`${where}: two files normalise to the same path "${p}"`);
        out.set(p, a);
      } else {
        throw new SpecError(
          `${where}: "${r}" is not a regular file; declare symlinks and submodules in repo.yaml`,
        );
      }
    }
  }
  await walk(dir, '');
  return out;
}

/** The complete tree of one commit, checked, sorted by path bytes; contents are read while streaming. */
async function planCommit(spec: RepoSpec, c: CommitSpec): Promise<Array<[PathKey, PlannedEntry]>> {
  const where = `${spec.name}/repo.yaml: commit ${c.id}`;
  const entries = new Map<PathKey, PlannedEntry>();
  const add = (key: PathKey, e: PlannedEntry, what: string) => {
    if (entries.has(key))
      throw new SpecError(`${where}: ${what} ${showKey(key)} collides with another entry`);
    entries.set(key, e);
  };
  if (c.treeDir) {
    for (const [p, abs] of await readTree(c.treeDir, `${spec.name}/${path.basename(c.treeDir)}`)) {
      add(keyOf(p), { mode: '100644', source: { kind: 'disk', abs } }, 'file');
    }
  }
  for (const g of c.generate) {
    const width = g.count === null ? 0 : String(g.count - 1).length;
    for (let i = 0; i < (g.count ?? 1); i++) {
      const n = String(i).padStart(width, '0');
      const p = checkPath(`${where}: generate`, g.path.replaceAll('{i}', n));
      const source: EntrySource =
        g.content.kind === 'fill'
          ? { kind: 'fill', size: g.content.size }
          : {
              kind: 'bytes',
              bytes:
                g.content.kind === 'text'
                  ? Buffer.from(g.content.text.replaceAll('{i}', n), 'utf8')
                  : g.content.bytes,
            };
      add(keyOf(p), { mode: '100644', source }, 'generated file');
    }
  }
  for (const r of c.raw) {
    add(
      r.bytes.toString('latin1'),
      { mode: r.executable ? '100755' : '100644', source: { kind: 'bytes', bytes: r.content } },
      `raw entry "${r.written}" ->`,
    );
  }
  for (const p of c.executable) {
    const e = entries.get(keyOf(p));
    if (!e) throw new SpecError(`${where}: executable "${p}" is not a file of the tree`);
    e.mode = '100755';
  }
  for (const [p, target] of Object.entries(c.symlinks)) {
    add(
      keyOf(p),
      { mode: '120000', source: { kind: 'bytes', bytes: Buffer.from(target, 'utf8') } },
      'symlink',
    );
  }
  for (const [p, sha] of Object.entries(c.submodules))
    add(keyOf(p), { mode: '160000', source: { kind: 'gitlink', sha } }, 'submodule');

  // an entry may not also be a folder of another entry (e.g. "a" and "a/b")
  for (const key of entries.keys()) {
    for (let i = key.indexOf('/'); i !== -1; i = key.indexOf('/', i + 1)) {
      if (entries.has(key.slice(0, i)))
        throw new SpecError(`${where}: ${showKey(key.slice(0, i))} is both an entry and a folder`);
    }
  }
  return [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** C-style quoting for fast-import: `"` and `\` escaped, control bytes and every byte >= 0x80 as octal. */
function quotePath(key: PathKey): string {
  let out = '"';
  for (let i = 0; i < key.length; i++) {
    const b = key.charCodeAt(i);
    if (b === 0x22 || b === 0x5c) out += '\\' + key[i];
    else if (b < 0x20 || b >= 0x7f) out += '\\' + b.toString(8).padStart(3, '0');
    else out += key[i];
  }
  return out + '"';
}

/** Deterministic filler for `size`: byte n of a file is n mod 256. 64 KiB, a multiple of 256. */
const FILL = Buffer.from(Array.from({ length: 64 * 1024 }, (_, n) => n % 256));
/** Bytes gathered before they are handed to fast-import's stdin. */
const FLUSH_BYTES = 256 * 1024;

/**
 * `git fast-import` fed as the stream is produced, with back-pressure, so no more than a few hundred
 * KiB (plus the largest file read from disk) is held at once.
 */
class FastImport {
  private readonly child: ChildProcess & { stdin: Writable };
  private readonly stderr: Buffer[] = [];
  private readonly exited: Promise<void>;
  private exit: { code: number | null; error?: Error } | null = null;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(gitdir: string, marksFile: string, env: NodeJS.ProcessEnv) {
    const child = spawn(
      'git',
      ['--git-dir', gitdir, 'fast-import', '--quiet', `--export-marks=${marksFile}`],
      {
        env,
        stdio: ['pipe', 'ignore', 'pipe'],
      },
    );
    this.child = child;
    child.stderr.on('data', (b: Buffer) => this.stderr.push(b));
    child.stdin.on('error', () => {}); // a failing git closes stdin early; the exit code reports it
    this.exited = new Promise((resolve) => {
      child.on('error', (error) => {
        this.exit = { code: null, error };
        resolve();
      });
      child.on('close', (code) => {
        this.exit ??= { code };
        resolve();
      });
    });
  }

  private failure(): Error {
    const detail = this.exit?.error?.message ?? Buffer.concat(this.stderr).toString('utf8').trim();
    return new Error(
      `git fast-import failed (${this.exit?.code ?? 'not started'}): ${detail || 'exited early'}`,
    );
  }

  private async flush(): Promise<void> {
    if (this.pendingBytes === 0) return;
    const parts = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    if (this.exit) throw this.failure();
    const stdin = this.child.stdin;
    let ok = true;
    stdin.cork(); // handed over in one writev, without copying the parts together
    for (const b of parts) ok = stdin.write(b);
    stdin.uncork();
    if (!ok) {
      await Promise.race([new Promise((resolve) => stdin.once('drain', resolve)), this.exited]);
    }
  }

  private async push(b: Buffer): Promise<void> {
    this.pending.push(b);
    this.pendingBytes += b.length;
    if (this.pendingBytes >= FLUSH_BYTES) await this.flush();
  }

  line(s: string): Promise<void> {
    return this.push(Buffer.from(s + '\n', 'utf8'));
  }

  async data(bytes: Buffer | string): Promise<void> {
    const b = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    await this.line(`data ${b.length}`);
    await this.push(b);
    await this.push(Buffer.from('\n'));
  }

  /** A `data` command of `size` filler bytes, produced chunk by chunk. */
  async dataFill(size: number): Promise<void> {
    await this.line(`data ${size}`);
    for (let left = size; left > 0; left -= FILL.length)
      await this.push(left >= FILL.length ? FILL : FILL.subarray(0, left));
    await this.push(Buffer.from('\n'));
  }

  /** Ends the stream and waits for fast-import to finish; throws when it failed. */
  async end(): Promise<void> {
    await this.flush();
    this.child.stdin.end();
    await this.exited;
    if (this.exit?.code !== 0) throw this.failure();
  }

  /** Stops fast-import after an error of ours. */
  async abort(): Promise<void> {
    if (!this.exit) this.child.kill();
    await this.exited;
  }
}

async function writeCommit(
  s: FastImport,
  c: CommitSpec,
  entries: Array<[PathKey, PlannedEntry]>,
  marks: Map<string, number>,
): Promise<void> {
  const mark = marks.size + 1;
  marks.set(c.id, mark);
  await s.line(`reset ${BUILD_REF}`);
  await s.line(`commit ${BUILD_REF}`);
  await s.line(`mark :${mark}`);
  await s.line(`author ${AUTHOR} ${c.time} +0000`);
  await s.line(`committer ${AUTHOR} ${c.time} +0000`);
  await s.data(c.message);
  for (const [i, p] of c.parents.entries()) await s.line(`${i === 0 ? 'from' : 'merge'} :${marks.get(p)}`);
  await s.line('deleteall');
  for (const [key, e] of entries) {
    const src = e.source;
    if (src.kind === 'gitlink') {
      await s.line(`M ${e.mode} ${src.sha} ${quotePath(key)}`);
      continue;
    }
    await s.line(`M ${e.mode} inline ${quotePath(key)}`);
    if (src.kind === 'fill') await s.dataFill(src.size);
    else await s.data(src.kind === 'disk' ? await fs.readFile(src.abs) : src.bytes);
  }
  await s.line('');
}

// ---------------------------------------------------------------------------
// git

/** An environment no user or system git configuration can leak into. */
function gitEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('GIT_') && k !== 'HOME' && k !== 'XDG_CONFIG_HOME' && k !== 'EMAIL') env[k] = v;
  }
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: process.platform === 'win32' ? 'NUL' : '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
  };
}

function git(args: string[], env: NodeJS.ProcessEnv, input?: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else
        reject(
          new Error(`git ${args.join(' ')} failed (${code}): ${Buffer.concat(err).toString('utf8').trim()}`),
        );
    });
    child.stdin.on('error', () => {}); // a failing git closes stdin early; the exit code reports it
    child.stdin.end(input ?? Buffer.alloc(0));
  });
}

async function buildOne(name: string, outDir: string): Promise<BuiltFixture> {
  const spec = await loadRepoSpec(name);
  const gitdir = path.join(outDir, `${name}.git`);
  const tmpdir = path.join(outDir, `.${name}.git.tmp-${process.pid}`);
  const env = gitEnv(path.join(outDir, '.no-home'));
  await fs.rm(tmpdir, { recursive: true, force: true });

  try {
    await git(['init', '--bare', '--quiet', '--object-format=sha1', '--template=', tmpdir], env);

    // Check every commit before git starts; file contents are read while streaming.
    const planned: Array<Array<[PathKey, PlannedEntry]>> = [];
    for (const c of spec.commits) planned.push(await planCommit(spec, c));

    const marksFile = path.join(tmpdir, 'fixture-marks');
    const s = new FastImport(tmpdir, marksFile, env);
    const marks = new Map<string, number>();
    try {
      await s.line('feature done');
      for (const [i, c] of spec.commits.entries()) await writeCommit(s, c, planned[i]!, marks);
      for (const [ref, r] of spec.refs) {
        if (r.kind === 'direct') {
          await s.line(`reset ${ref}`);
          await s.line(`from :${marks.get(r.target)}`);
          await s.line('');
        } else {
          const time = r.time ?? spec.commits.find((c) => c.id === r.target)!.time;
          await s.line(`tag ${ref.slice('refs/tags/'.length)}`);
          await s.line(`from :${marks.get(r.target)}`);
          await s.line(`tagger ${AUTHOR} ${time} +0000`);
          await s.data(r.message); // a tag has no optional trailing LF, so no blank line here
        }
      }
      await s.line(`reset ${BUILD_REF}`); // no "from": deletes the scratch ref
      await s.line('');
      await s.line('done');
      await s.end();
    } catch (e) {
      await s.abort();
      throw e;
    }
    await git(['--git-dir', tmpdir, 'symbolic-ref', 'HEAD', spec.head], env);

    const markSha = new Map<number, string>();
    for (const line of (await fs.readFile(marksFile, 'utf8')).split('\n')) {
      const m = /^:(\d+) ([0-9a-f]{40})$/.exec(line);
      if (m) markSha.set(Number(m[1]), m[2]!);
    }
    await fs.rm(marksFile);
    const commits: Record<string, string> = {};
    for (const c of spec.commits) commits[c.id] = markSha.get(marks.get(c.id)!)!;

    const refs: Record<string, string> = {};
    const peeled: Record<string, string> = {};
    const listed = await git(
      ['--git-dir', tmpdir, 'for-each-ref', '--format=%(refname) %(objectname) %(*objectname)'],
      env,
    );
    for (const line of listed.split('\n')) {
      if (!line) continue;
      const [ref, obj, peel] = line.split(' ') as [string, string, string | undefined];
      refs[ref] = obj;
      peeled[ref] = peel || obj;
    }
    for (const [ref, r] of spec.refs) {
      if (peeled[ref] !== commits[r.target])
        throw new Error(`${name}: ref ${ref} was not written as expected`);
    }
    if (Object.keys(refs).length !== spec.refs.size) {
      throw new Error(`${name}: unexpected refs after fast-import: ${Object.keys(refs).join(', ')}`);
    }

    await fs.rm(gitdir, { recursive: true, force: true });
    await fs.rename(tmpdir, gitdir);
    return { name, gitdir, commits, refs: sortKeys(refs), peeled: sortKeys(peeled), head: spec.head };
  } catch (e) {
    await fs.rm(tmpdir, { recursive: true, force: true });
    throw e;
  }
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * (Re)builds the named fixture repositories (all when names is omitted) as
 * bare repositories outDir/<name>.git, and writes outDir/fixtures.json. When
 * only some repositories are built, entries for the others already in
 * fixtures.json are kept as long as their git directories still exist.
 */
export async function buildFixtures(outDir: string, names?: string[]): Promise<Record<string, BuiltFixture>> {
  const out = path.resolve(outDir);
  const available = await listFixtures();
  const wanted = names ?? available;
  for (const n of wanted)
    if (!available.includes(n))
      throw new Error(`unknown fixture repository "${n}" (have: ${available.join(', ')})`);
  await fs.mkdir(out, { recursive: true });

  const built = await Promise.all(wanted.map((n) => buildOne(n, out)));
  const result: Record<string, BuiltFixture> = {};
  for (const b of built) result[b.name] = b;

  const jsonFile = path.join(out, 'fixtures.json');
  let previous: Record<string, BuiltFixture> = {};
  if (names) {
    try {
      previous = JSON.parse(await fs.readFile(jsonFile, 'utf8')) as Record<string, BuiltFixture>;
    } catch {
      previous = {};
    }
  }
  const merged: Record<string, BuiltFixture> = {};
  for (const [n, b] of Object.entries(previous)) if (!(n in result) && existsSync(b.gitdir)) merged[n] = b;
  Object.assign(merged, result);
  const tmpJson = `${jsonFile}.tmp-${process.pid}`;
  await fs.writeFile(tmpJson, JSON.stringify(sortKeys(merged), null, 2) + '\n');
  await fs.rename(tmpJson, jsonFile);
  return result;
}

// ---------------------------------------------------------------------------
// CLI

function isMain(): boolean {
  const argv1 = process.argv[1];
  if (!argv1) return false;
  try {
    return realpathSync(argv1) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return import.meta.url === pathToFileURL(argv1).href;
  }
}

if (isMain()) {
  const [outArg, ...nameArgs] = process.argv.slice(2);
  const outDir = outArg ? path.resolve(outArg) : DEFAULT_OUT_DIR;
  const started = Date.now();
  buildFixtures(outDir, nameArgs.length > 0 ? nameArgs : undefined).then(
    (built) => {
      for (const b of Object.values(built)) {
        process.stderr.write(`${b.name}: ${b.gitdir} (HEAD -> ${b.head})\n`);
        for (const [id, sha] of Object.entries(b.commits)) {
          const at = Object.entries(b.peeled)
            .filter(([, s]) => s === sha)
            .map(([r]) => r);
          process.stderr.write(`  ${id} ${sha}${at.length ? ` ${at.join(' ')}` : ''}\n`);
        }
      }
      process.stderr.write(`wrote ${path.join(outDir, 'fixtures.json')} in ${Date.now() - started} ms\n`);
    },
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
