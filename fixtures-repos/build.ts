/**
 * Builds the fixture git repositories described under fixtures-repos/ into
 * bare repositories with deterministic commit SHAs.
 *
 * Each fixtures-repos/<name>/repo.yaml lists commits whose trees are plain
 * folders next to it (plus symlinks, submodules and executable bits declared
 * in the YAML). The history is written with `git fast-import`, without a work
 * tree, with a fixed author/committer and each commit's own UTC date, and with
 * every user/system git setting shut out, so the SHAs are identical on every
 * machine. See fixtures-repos/README.md for the format.
 *
 * CLI: npx tsx fixtures-repos/build.ts [outDir] [name...]
 */
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
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
    if (!allowed.includes(k)) throw new SpecError(`${where}: unknown key "${k}" (allowed: ${allowed.join(', ')})`);
  }
}

function parseDate(where: string, v: unknown): number {
  const s = v instanceof Date ? v.toISOString() : v;
  if (typeof s !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(s)) {
    throw new SpecError(`${where}: date must be an ISO 8601 UTC string like "2024-03-01T09:00:00Z"`);
  }
  const ms = Date.parse(s);
  if (!Number.isFinite(ms) || ms % 1000 !== 0) throw new SpecError(`${where}: invalid date "${s}" (whole seconds only)`);
  return ms / 1000;
}

function parseMessage(where: string, v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '') throw new SpecError(`${where}: message must be a non-empty string`);
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
    if (typeof val !== 'string' || val === '') throw new SpecError(`${where}.${k}: must be a non-empty string`);
    out[checkPath(where, k)] = val;
  }
  return out;
}

export async function loadRepoSpec(name: string): Promise<RepoSpec> {
  const dir = path.join(FIXTURES_ROOT, name);
  const file = path.join(dir, 'repo.yaml');
  const raw: unknown = parseYaml(await fs.readFile(file, 'utf8'));
  const w = `${name}/repo.yaml`;
  if (!isRecord(raw)) throw new SpecError(`${w}: must be a mapping`);
  expectKeys(w, raw, ['head', 'commits', 'refs']);

  if (!Array.isArray(raw.commits) || raw.commits.length === 0) throw new SpecError(`${w}: commits must be a non-empty list`);
  const commits: CommitSpec[] = [];
  const ids = new Set<string>();
  raw.commits.forEach((c: unknown, i: number) => {
    const cw = `${w}: commits[${i}]`;
    if (!isRecord(c)) throw new SpecError(`${cw}: must be a mapping`);
    expectKeys(cw, c, ['id', 'tree', 'message', 'date', 'parents', 'symlinks', 'submodules', 'executable']);
    if (typeof c.id !== 'string' || !ID_RE.test(c.id)) throw new SpecError(`${cw}: id must match ${ID_RE}`);
    if (ids.has(c.id)) throw new SpecError(`${cw}: duplicate id "${c.id}"`);
    let treeDir: string | null = null;
    if (c.tree !== undefined && c.tree !== null) {
      if (typeof c.tree !== 'string' || !ID_RE.test(c.tree)) throw new SpecError(`${cw}: tree must be a folder name next to repo.yaml`);
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
    for (const p of parents) if (!ids.has(p)) throw new SpecError(`${cw}: parent "${p}" is not an earlier commit`);
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
    });
  });

  if (!isRecord(raw.refs) || Object.keys(raw.refs).length === 0) throw new SpecError(`${w}: refs must be a non-empty mapping`);
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
      if (!ref.startsWith('refs/tags/')) throw new SpecError(`${rw}: annotated tags must live under refs/tags/`);
      if (typeof v.tag !== 'string' || !ids.has(v.tag)) throw new SpecError(`${rw}: tag must name a commit id`);
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

/** Reads every regular file below dir as [path relative to dir with "/" separators, bytes]. */
async function readTree(dir: string, where: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  async function walk(abs: string, rel: string): Promise<void> {
    const entries = await fs.readdir(abs, { withFileTypes: true });
    for (const e of entries) {
      const a = path.join(abs, e.name);
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) await walk(a, r);
      else if (e.isFile()) {
        const p = checkPath(where, r);
        if (out.has(p)) throw new SpecError(`${where}: two files normalise to the same path "${p}"`);
        out.set(p, await fs.readFile(a));
      } else {
        throw new SpecError(`${where}: "${r}" is not a regular file; declare symlinks and submodules in repo.yaml`);
      }
    }
  }
  await walk(dir, '');
  return out;
}

/** C-style quoting for fast-import paths (raw UTF-8 bytes are allowed inside the quotes). */
function quotePath(p: string): string {
  return '"' + p.replace(/[\\"]/g, (c) => '\\' + c).replace(/[\x00-\x1f\x7f]/g, (c) => '\\' + c.charCodeAt(0).toString(8).padStart(3, '0')) + '"';
}

class Stream {
  readonly parts: Buffer[] = [];
  line(s: string): void {
    this.parts.push(Buffer.from(s + '\n', 'utf8'));
  }
  data(bytes: Buffer | string): void {
    const b = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    this.line(`data ${b.length}`);
    this.parts.push(b, Buffer.from('\n'));
  }
}

async function writeCommit(s: Stream, spec: RepoSpec, c: CommitSpec, marks: Map<string, number>): Promise<void> {
  const where = `${spec.name}/repo.yaml: commit ${c.id}`;
  const files = c.treeDir ? await readTree(c.treeDir, `${spec.name}/${path.basename(c.treeDir)}`) : new Map<string, Buffer>();

  // mode + content for every entry, with collision checks between files and special entries
  const entries = new Map<string, { mode: string; blob?: Buffer; sha?: string }>();
  for (const [p, b] of files) entries.set(p, { mode: '100644', blob: b });
  for (const p of c.executable) {
    const e = entries.get(p);
    if (!e) throw new SpecError(`${where}: executable "${p}" is not a file of the tree`);
    e.mode = '100755';
  }
  for (const [p, target] of Object.entries(c.symlinks)) {
    if (entries.has(p)) throw new SpecError(`${where}: symlink "${p}" collides with another entry`);
    entries.set(p, { mode: '120000', blob: Buffer.from(target, 'utf8') });
  }
  for (const [p, sha] of Object.entries(c.submodules)) {
    if (entries.has(p)) throw new SpecError(`${where}: submodule "${p}" collides with another entry`);
    entries.set(p, { mode: '160000', sha });
  }
  // an entry may not also be a folder of another entry (e.g. "a" and "a/b")
  const all = [...entries.keys()];
  const set = new Set(all);
  for (const p of all) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      if (set.has(prefix)) throw new SpecError(`${where}: "${prefix}" is both an entry and a folder`);
    }
  }

  const mark = marks.size + 1;
  marks.set(c.id, mark);
  s.line(`reset ${BUILD_REF}`);
  s.line(`commit ${BUILD_REF}`);
  s.line(`mark :${mark}`);
  s.line(`author ${AUTHOR} ${c.time} +0000`);
  s.line(`committer ${AUTHOR} ${c.time} +0000`);
  s.data(c.message);
  c.parents.forEach((p, i) => s.line(`${i === 0 ? 'from' : 'merge'} :${marks.get(p)}`));
  s.line('deleteall');
  for (const p of all.sort()) {
    const e = entries.get(p)!;
    if (e.sha) {
      s.line(`M ${e.mode} ${e.sha} ${quotePath(p)}`);
    } else {
      s.line(`M ${e.mode} inline ${quotePath(p)}`);
      s.data(e.blob!);
    }
  }
  s.line('');
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
      else reject(new Error(`git ${args.join(' ')} failed (${code}): ${Buffer.concat(err).toString('utf8').trim()}`));
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

    const s = new Stream();
    s.line('feature done');
    const marks = new Map<string, number>();
    for (const c of spec.commits) await writeCommit(s, spec, c, marks);
    for (const [ref, r] of spec.refs) {
      if (r.kind === 'direct') {
        s.line(`reset ${ref}`);
        s.line(`from :${marks.get(r.target)}`);
        s.line('');
      } else {
        const time = r.time ?? spec.commits.find((c) => c.id === r.target)!.time;
        s.line(`tag ${ref.slice('refs/tags/'.length)}`);
        s.line(`from :${marks.get(r.target)}`);
        s.line(`tagger ${AUTHOR} ${time} +0000`);
        s.data(r.message); // a tag has no optional trailing LF, so no blank line here
      }
    }
    s.line(`reset ${BUILD_REF}`); // no "from": deletes the scratch ref
    s.line('');
    s.line('done');

    const marksFile = path.join(tmpdir, 'fixture-marks');
    await git(['--git-dir', tmpdir, 'fast-import', '--quiet', `--export-marks=${marksFile}`], env, Buffer.concat(s.parts));
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
    const listed = await git(['--git-dir', tmpdir, 'for-each-ref', '--format=%(refname) %(objectname) %(*objectname)'], env);
    for (const line of listed.split('\n')) {
      if (!line) continue;
      const [ref, obj, peel] = line.split(' ') as [string, string, string | undefined];
      refs[ref] = obj;
      peeled[ref] = peel || obj;
    }
    for (const [ref, r] of spec.refs) {
      if (peeled[ref] !== commits[r.target]) throw new Error(`${name}: ref ${ref} was not written as expected`);
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
  for (const n of wanted) if (!available.includes(n)) throw new Error(`unknown fixture repository "${n}" (have: ${available.join(', ')})`);
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
          const at = Object.entries(b.peeled).filter(([, s]) => s === sha).map(([r]) => r);
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
