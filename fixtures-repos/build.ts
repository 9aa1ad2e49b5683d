/**
 * Builds each fixtures-repos/<name>/repo.yaml history into a bare repository <outDir>/<name>.git whose commit
 * SHAs are the same on every machine (fixtures-repos/README.md describes the format and why).
 *
 *   npx tsx fixtures-repos/build.ts [outDir]
 */
import { execFile, spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import fs from 'node:fs/promises';
import { devNull } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { z } from 'zod';
import { writeFileAtomic } from '../src/shared/fs.ts';

/** This folder: one folder per fixture repository. */
export const FIXTURES_ROOT = import.meta.dirname;
export const DEFAULT_OUT_DIR = path.resolve(FIXTURES_ROOT, '..', '.skillpin', 'fixtures');

export interface BuiltFixture {
  name: string;
  /** The bare repository, `<outDir>/<name>.git` (absolute). */
  gitdir: string;
  /** Commit id in repo.yaml → 40-hex SHA. */
  commits: Record<string, string>;
  /** Full ref name → the object it stores (the tag object for an annotated tag). */
  refs: Record<string, string>;
}

const AUTHOR = 'skillpin fixtures <fixtures@skillpin.invalid>';
const BUILD_REF = 'refs/skillpin-build/tmp';
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const REF = /^refs\/(heads|tags)\/[A-Za-z0-9_-]+(?:[./][A-Za-z0-9_-]+)*$/;
/** Largest `count` and `size` of generated files: a typo fails instead of filling the disk. */
const MAX_COUNT = 100_000;
const MAX_SIZE = 1024 ** 3;

const PLAIN = 'must be a relative path without empty, ".", ".." or ".git" parts';
const isPlainPath = (text: string) =>
  !/[\0\n]/.test(text) &&
  !text.split('/').some((part) => ['', '.', '..', '.git'].includes(part.toLowerCase()));
const plainPath = z.string().refine(isPlainPath, PLAIN);

/** `%XX` is the byte 0xXX, every other character its UTF-8 bytes; undefined when a `%` is not `%XX`. */
function percentDecoded(text: string): Buffer | undefined {
  if (/%(?![0-9A-Fa-f]{2})/.test(text)) return undefined;
  const parts = text.split(/(%[0-9A-Fa-f]{2})/);
  return Buffer.concat(
    parts.map((part, n) =>
      n % 2 === 1 ? Buffer.from([Number.parseInt(part.slice(1), 16)]) : Buffer.from(part),
    ),
  );
}

const rawPath = z
  .string()
  .transform((text, ctx) => {
    const bytes = percentDecoded(text);
    if (bytes === undefined)
      ctx.addIssue({ code: 'custom', message: 'write "%25" for a "%" that is not "%XX"' });
    return bytes ?? Buffer.alloc(0);
  })
  .refine(
    (bytes) => !bytes.includes(0) && !bytes.toString('latin1').split('/').includes(''),
    'must not hold a NUL byte or an empty part',
  );

const base64 = z
  .string()
  .transform((text) => text.replace(/\s+/g, ''))
  .refine(
    (text) => Buffer.from(text, 'base64').toString('base64') === text,
    'must be canonical padded base64',
  )
  .transform((text) => Buffer.from(text, 'base64'));

// Normalised as `git commit` does: no trailing white space, one final newline.
const message = z
  .string()
  .refine((text) => text.trim() !== '', 'must not be empty')
  .transform((text) => `${text.replace(/\s+$/, '')}\n`);

const generated = z
  .strictObject({
    path: z.string(),
    count: z.int().min(1).max(MAX_COUNT).optional(),
    content: z.string().optional(),
    size: z.int().min(0).max(MAX_SIZE).optional(),
  })
  .refine((item) => (item.content === undefined) !== (item.size === undefined), 'give content or size')
  .refine(
    (item) => item.path.includes('{i}') === (item.count !== undefined),
    'a path holds {i} exactly when count is given',
  )
  .refine((item) => isPlainPath(item.path.replaceAll('{i}', '0')), { message: PLAIN, path: ['path'] });

const raw = z
  .strictObject({ path: rawPath, content: z.string().optional(), contentBase64: base64.optional() })
  .refine((item) => (item.content === undefined) !== (item.contentBase64 === undefined), 'give one content')
  .transform((item) => ({ path: item.path, bytes: item.contentBase64 ?? Buffer.from(item.content!) }));

const commit = z.strictObject({
  id: z.string().regex(ID),
  tree: z.string().regex(ID, 'must be a folder next to repo.yaml'),
  date: z
    .string()
    .regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'must be a UTC time in whole seconds: "2024-03-01T09:00:00Z"')
    .transform((text) => Date.parse(text) / 1000),
  message,
  executable: z.array(plainPath).default([]),
  symlinks: z.record(plainPath, z.string().min(1)).default({}),
  submodules: z.record(plainPath, z.string().regex(/^[0-9a-f]{40}$/)).default({}),
  generate: z.array(generated).default([]),
  raw: z.array(raw).default([]),
});

const repoSchema = z
  .strictObject({
    head: z.string().startsWith('refs/heads/'),
    commits: z.array(commit).min(1),
    refs: z.record(
      z.string().regex(REF),
      z.union([z.string(), z.strictObject({ tag: z.string(), message })]),
    ),
  })
  .superRefine((repo, ctx) => {
    const ids = repo.commits.map((c) => c.id);
    if (new Set(ids).size !== ids.length) ctx.addIssue({ code: 'custom', message: 'commit ids must differ' });
    for (const [ref, target] of Object.entries(repo.refs)) {
      const id = typeof target === 'string' ? target : target.tag;
      if (!ids.includes(id))
        ctx.addIssue({ code: 'custom', message: `names no commit`, path: ['refs', ref] });
      if (typeof target !== 'string' && !ref.startsWith('refs/tags/'))
        ctx.addIssue({
          code: 'custom',
          message: 'an annotated tag lives in refs/tags/',
          path: ['refs', ref],
        });
    }
    if (!(repo.head in repo.refs)) ctx.addIssue({ code: 'custom', message: 'must be a ref', path: ['head'] });
  });

type Repo = z.infer<typeof repoSchema>;
type Commit = Repo['commits'][number];

interface Entry {
  mode: '100644' | '100755' | '120000' | '160000';
  content: { file: string } | { bytes: Buffer } | { fill: number } | { gitlink: string };
}

/** Tree paths as one char per byte (latin1), so raw paths that are not UTF-8 share a map with plain ones. */
const keyOf = (plain: string) => Buffer.from(plain.normalize('NFC')).toString('latin1');
const shown = (key: string) => JSON.stringify(Buffer.from(key, 'latin1').toString());

async function readRepo(dir: string): Promise<Repo> {
  const parsed = repoSchema.safeParse(parse(await fs.readFile(path.join(dir, 'repo.yaml'), 'utf8')));
  if (!parsed.success)
    throw new Error(`${path.basename(dir)}/repo.yaml is invalid:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The regular files below `dir`, as "/"-separated paths; anything else on disk belongs in repo.yaml. */
async function filesBelow(dir: string): Promise<string[]> {
  const files = [];
  for (const relative of await fs.readdir(dir, { recursive: true })) {
    const stat = await fs.lstat(path.join(dir, relative));
    const file = relative.split(path.sep).join('/');
    if (stat.isFile() && isPlainPath(file)) files.push(file);
    else if (!stat.isDirectory()) throw new Error(`${dir}: declare "${file}" in repo.yaml (symlinks, raw)`);
  }
  return files;
}

/** Every entry of a commit's tree by path, checked before git starts; file contents are read while streaming. */
async function treeOf(dir: string, commit: Commit): Promise<Map<string, Entry>> {
  const where = `${path.basename(dir)}/repo.yaml: commit ${commit.id}`;
  const entries = new Map<string, Entry>();
  const executable = new Set(commit.executable.map(keyOf));
  const add = (key: string, content: Entry['content'], mode: Entry['mode'] = '100644') => {
    if (entries.has(key)) throw new Error(`${where}: ${shown(key)} is declared twice`);
    entries.set(key, { mode: executable.delete(key) ? '100755' : mode, content });
  };
  const treeDir = path.join(dir, commit.tree);
  for (const file of await filesBelow(treeDir)) add(keyOf(file), { file: path.join(treeDir, file) });
  for (const item of commit.generate) {
    const width = String((item.count ?? 1) - 1).length;
    for (let n = 0; n < (item.count ?? 1); n++) {
      const i = String(n).padStart(width, '0');
      add(
        keyOf(item.path.replaceAll('{i}', i)),
        item.size === undefined
          ? { bytes: Buffer.from(item.content!.replaceAll('{i}', i)) }
          : { fill: item.size },
      );
    }
  }
  for (const item of commit.raw) add(item.path.toString('latin1'), { bytes: item.bytes });
  if (executable.size > 0)
    throw new Error(`${where}: executable ${shown([...executable][0]!)} is not a file of the tree`);
  for (const [link, target] of Object.entries(commit.symlinks))
    add(keyOf(link), { bytes: Buffer.from(target) }, '120000');
  for (const [at, sha] of Object.entries(commit.submodules)) add(keyOf(at), { gitlink: sha }, '160000');
  for (const key of entries.keys())
    for (let slash = key.indexOf('/'); slash !== -1; slash = key.indexOf('/', slash + 1))
      if (entries.has(key.slice(0, slash)))
        throw new Error(`${where}: ${shown(key.slice(0, slash))} is both an entry and a folder`);
  return entries;
}

/** fast-import's quoted path: `"` and `\` escaped, control bytes and bytes >= 0x7f in octal. */
function quoted(key: string): string {
  const octal = (char: string) => `\\${char.charCodeAt(0).toString(8).padStart(3, '0')}`;
  return `"${key.replace(/["\\]/g, '\\$&').replace(/[\0-\x1f\x7f-\xff]/g, octal)}"`;
}

function* data(bytes: Buffer): Generator<Buffer | string> {
  yield `data ${bytes.length}\n`;
  yield bytes;
  yield '\n';
}

/** Byte n of a filler file is n mod 256; 64 KiB pieces, so a large file is never held whole. */
const FILL = Buffer.from(Array.from({ length: 64 * 1024 }, (_, n) => n % 256));
function* filler(size: number): Generator<Buffer | string> {
  yield `data ${size}\n`;
  for (let left = size; left > 0; left -= FILL.length) yield FILL.subarray(0, Math.min(left, FILL.length));
  yield '\n';
}

async function* importStream(repo: Repo, trees: Map<string, Entry>[]): AsyncGenerator<Buffer | string> {
  const marks = new Map(repo.commits.map((c, n) => [c.id, { mark: n + 1, date: c.date }]));
  yield 'feature done\n';
  for (const [n, c] of repo.commits.entries()) {
    yield `commit ${BUILD_REF}\nmark :${n + 1}\nauthor ${AUTHOR} ${c.date} +0000\ncommitter ${AUTHOR} ${c.date} +0000\n`;
    yield* data(Buffer.from(c.message));
    yield n === 0 ? 'deleteall\n' : `from :${n}\ndeleteall\n`;
    for (const [key, { mode, content }] of trees[n]!) {
      if ('gitlink' in content) yield `M ${mode} ${content.gitlink} ${quoted(key)}\n`;
      else yield `M ${mode} inline ${quoted(key)}\n`;
      if ('fill' in content) yield* filler(content.fill);
      else if ('file' in content) yield* data(await fs.readFile(content.file));
      else if ('bytes' in content) yield* data(content.bytes);
    }
    yield '\n';
  }
  for (const [ref, target] of Object.entries(repo.refs)) {
    if (typeof target === 'string') {
      yield `reset ${ref}\nfrom :${marks.get(target)!.mark}\n\n`;
      continue;
    }
    const { mark, date } = marks.get(target.tag)!;
    yield `tag ${ref.slice('refs/tags/'.length)}\nfrom :${mark}\ntagger ${AUTHOR} ${date} +0000\n`;
    yield* data(Buffer.from(target.message));
  }
  // A reset without "from" drops the scratch branch the commits were made on.
  yield `reset ${BUILD_REF}\n\ndone\n`;
}

/** Git with no user or system configuration and no GIT_* variables from outside: the same objects everywhere. */
export function gitEnv(): NodeJS.ProcessEnv {
  const outside = ['HOME', 'XDG_CONFIG_HOME', 'EMAIL'];
  const env = Object.entries(process.env).filter(
    ([key]) => !key.startsWith('GIT_') && !outside.includes(key),
  );
  return {
    ...Object.fromEntries(env),
    HOME: devNull,
    XDG_CONFIG_HOME: devNull,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: devNull,
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
  };
}

const git = async (...args: string[]) => (await promisify(execFile)('git', args, { env: gitEnv() })).stdout;

async function fastImport(
  gitdir: string,
  marks: string,
  stream: AsyncIterable<Buffer | string>,
): Promise<void> {
  const child = spawn('git', ['--git-dir', gitdir, 'fast-import', '--quiet', `--export-marks=${marks}`], {
    env: gitEnv(),
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const stderr: Buffer[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  const [fed, code] = await Promise.allSettled([pipeline(Readable.from(stream), child.stdin), exited]);
  if (code.status === 'rejected') throw code.reason;
  if (code.value === 0 && fed.status === 'fulfilled') return;
  // Either side may have failed first: a stream that ends early, or a git that stops reading.
  const ours = fed.status === 'rejected' ? ` (writing its input: ${(fed.reason as Error).message})` : '';
  throw new Error(`git fast-import failed: ${Buffer.concat(stderr).toString().trim()}${ours}`);
}

async function buildRepository(dir: string, outDir: string): Promise<BuiltFixture> {
  const name = path.basename(dir);
  const repo = await readRepo(dir);
  const trees = await Promise.all(repo.commits.map((c) => treeOf(dir, c)));
  const gitdir = path.join(outDir, `${name}.git`);
  const building = path.join(outDir, `.${name}.git.${process.pid}`);
  const marks = path.join(outDir, `.${name}.marks.${process.pid}`);
  try {
    const branch = repo.head.slice('refs/heads/'.length);
    await git(
      'init',
      '--bare',
      '--quiet',
      '--object-format=sha1',
      '--template=',
      `--initial-branch=${branch}`,
      building,
    );
    await fastImport(building, marks, importStream(repo, trees));
    const shaOfMark = new Map(
      (await fs.readFile(marks, 'utf8')).split('\n').map((line) => [line.split(' ')[0], line.split(' ')[1]]),
    );
    const listed = await git('--git-dir', building, 'for-each-ref', '--format=%(refname) %(objectname)');
    await fs.rm(gitdir, { recursive: true, force: true });
    await fs.rename(building, gitdir);
    return {
      name,
      gitdir,
      commits: Object.fromEntries(repo.commits.map((c, n) => [c.id, shaOfMark.get(`:${n + 1}`)!])),
      refs: Object.fromEntries(
        listed
          .trim()
          .split('\n')
          .map((line) => line.split(' ')),
      ),
    };
  } finally {
    await fs.rm(building, { recursive: true, force: true });
    await fs.rm(marks, { force: true });
  }
}

/** (Re)builds every repository of `root` into `outDir` and writes `outDir/fixtures.json`, the same record. */
export async function buildFixtures(
  outDir: string = DEFAULT_OUT_DIR,
  root: string = FIXTURES_ROOT,
): Promise<Record<string, BuiltFixture>> {
  const out = path.resolve(outDir);
  await fs.mkdir(out, { recursive: true });
  const folders = await fs.readdir(root, { withFileTypes: true });
  const names = folders.filter((folder) => folder.isDirectory()).map((folder) => folder.name);
  const built = await Promise.all(names.sort().map((name) => buildRepository(path.join(root, name), out)));
  const fixtures = Object.fromEntries(built.map((fixture) => [fixture.name, fixture]));
  await writeFileAtomic(path.join(out, 'fixtures.json'), `${JSON.stringify(fixtures, null, 2)}\n`);
  return fixtures;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(realpathSync(entry)).href) {
  const outDir = path.resolve(process.argv[2] ?? DEFAULT_OUT_DIR);
  await buildFixtures(outDir).then(
    (built) => {
      for (const { name, commits } of Object.values(built))
        process.stderr.write(
          `${name}: ${Object.entries(commits)
            .map((pair) => pair.join(' '))
            .join(', ')}\n`,
        );
      process.stderr.write(`wrote ${path.join(outDir, 'fixtures.json')}\n`);
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
