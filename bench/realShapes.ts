/**
 * A synthetic catalog of real shapes (issue 38): the shape of every skill in the fetched catalogs is measured at bench
 * time (the SKILL.md body's length, the frontmatter description's length, the other files' count and sizes), then
 * `repos` repositories of `skills` skills each are written with `git fast-import`, each skill the shape of a real
 * skill drawn at random (a seeded generator, so the same catalogs give the same SHAs) and its text words drawn from
 * the real bodies by their frequency: generated, never copied, and never committed (it lives under .skillpin/).
 * The same skills can be written as one folder tree for the SDK's folder server.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** One real skill's shape: bytes of SKILL.md after the frontmatter, of its description, and of each other file. */
export interface Shape {
  body: number;
  description: number;
  files: number[];
}

/** What the fetched catalogs look like: every skill's shape and the words of their bodies, by frequency. */
export interface Catalogs {
  shapes: Shape[];
  words: string[];
}

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  HOME: '/nonexistent',
};
/** A file larger than this in a real skill is drawn at this size (a few real skills ship multi-MiB assets). */
const MAX_DRAWN_FILE = 1024 * 1024;
const git = (gitdir: string, args: string[]) =>
  execFileSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8', env: GIT_ENV, maxBuffer: 1 << 28 });

/** Every blob's text of `ids` through one `git cat-file --batch`. */
function blobs(gitdir: string, ids: string[]): string[] {
  const out = spawnSync('git', ['--git-dir', gitdir, 'cat-file', '--batch'], {
    input: `${ids.join('\n')}\n`,
    env: GIT_ENV,
    maxBuffer: 1 << 30,
  }).stdout;
  const texts: string[] = [];
  let at = 0;
  for (let i = 0; i < ids.length; i++) {
    const eol = out.indexOf(10, at);
    const size = Number(out.toString('latin1', at, eol).split(' ')[2]);
    texts.push(out.toString('utf8', eol + 1, eol + 1 + size));
    at = eol + 1 + size + 1;
  }
  return texts;
}

/** The shapes of one catalog's skills at HEAD, and the words of their bodies added to `counts`. */
function measureCatalog(gitdir: string, counts: Map<string, number>): Shape[] {
  const entries = git(gitdir, ['ls-tree', '-r', '-l', 'HEAD'])
    .split('\n')
    .filter((line) => line.includes(' blob '))
    .map((line) => {
      const [meta, file] = line.split('\t') as [string, string];
      const [, , id, size] = meta.split(/\s+/) as [string, string, string, string];
      return { file, id, size: Number(size) };
    });
  const skillMds = entries.filter((e) => e.file === 'SKILL.md' || e.file.endsWith('/SKILL.md'));
  const dirs = skillMds.map((e) => path.posix.dirname(e.file)).map((d) => (d === '.' ? '' : `${d}/`));
  const texts = blobs(
    gitdir,
    skillMds.map((e) => e.id),
  );
  // A file belongs to the innermost skill folder holding it.
  const owned = new Map<string, number[]>(dirs.map((d) => [d, []]));
  for (const e of entries) {
    if (e.file === 'SKILL.md' || e.file.endsWith('/SKILL.md')) continue;
    let dir = e.file;
    do {
      dir = dir.includes('/') ? `${path.posix.dirname(dir.replace(/\/$/, ''))}/`.replace(/^\.\/$/, '') : '';
      if (owned.has(dir)) {
        owned.get(dir)!.push(Math.min(MAX_DRAWN_FILE, e.size));
        break;
      }
    } while (dir !== '');
  }
  return skillMds.map((_md, i) => {
    const dir = dirs[i]!;
    const text = texts[i]!;
    const end = text.startsWith('---') ? text.indexOf('\n---', 3) : -1;
    const front = end < 0 ? '' : text.slice(0, end);
    const description = /^description:\s*(.*)$/m.exec(front)?.[1]?.replace(/^["'>|-]+\s*/, '') ?? '';
    const body = end < 0 ? text : text.slice(text.indexOf('\n', end + 4) + 1);
    for (const word of body.toLowerCase().match(/[a-z][a-z0-9]{1,15}/g) ?? [])
      counts.set(word, (counts.get(word) ?? 0) + 1);
    return {
      body: Buffer.byteLength(body),
      description: Math.max(20, Math.min(1024, Buffer.byteLength(description))),
      files: owned.get(dir)!,
    };
  });
}

/** The shapes and words of every catalog (a git repository, bare or not) in `dir`. */
export function measureCatalogs(dir: string): Catalogs {
  const counts = new Map<string, number>();
  const shapes: Shape[] = [];
  for (const name of readdirSync(dir).sort()) shapes.push(...measureCatalog(path.join(dir, name), counts));
  // Words weighted by frequency: each appears once per 50 occurrences, at least once.
  const words: string[] = [];
  for (const [word, count] of [...counts].sort(([a], [b]) => (a < b ? -1 : 1)))
    for (let i = 0; i < Math.ceil(count / 50); i++) words.push(word);
  return { shapes, words };
}

/** A seeded generator (mulberry32): the same seed draws the same catalog. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** About `bytes` bytes of words drawn from `words`, in lines of about 80 characters. */
function text(words: string[], bytes: number, next: () => number): string {
  const parts: string[] = [];
  let length = 0;
  let line = 0;
  while (length < bytes) {
    const word = words[Math.floor(next() * words.length)]!;
    const sep = line + word.length > 80 ? '\n' : ' ';
    line = sep === '\n' ? word.length : line + word.length + 1;
    parts.push(word, sep);
    length += word.length + 1;
  }
  return parts.join('');
}

/** The files of skill `s` of repository `r`: its folder name and [path in the folder, content] pairs. */
function skillFiles(
  catalogs: Catalogs,
  r: number,
  s: number,
  next: () => number,
): [string, Array<[string, string]>] {
  const shape = catalogs.shapes[Math.floor(next() * catalogs.shapes.length)]!;
  const { words } = catalogs;
  const pick = () => words[Math.floor(next() * words.length)]!;
  const name = `${pick()}-${pick()}-${r}-${s}`.slice(-64).replace(/^-+/, '');
  const description = text(words, shape.description, next).replace(/\s+/g, ' ').trim();
  const files: Array<[string, string]> = [
    [
      'SKILL.md',
      `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n\n${text(words, shape.body, next)}`,
    ],
  ];
  shape.files.forEach((size, f) => {
    files.push([`${f % 3 === 2 ? 'scripts' : 'references'}/${pick()}-${f}.md`, text(words, size, next)]);
  });
  return [name, files];
}

/** A fast-import stream of one commit of `skills` skills for repository `r`, written to `write`. */
export function repoStream(
  catalogs: Catalogs,
  r: number,
  skills: number,
  write: (chunk: string) => void,
): void {
  const next = random(0x5eed + r);
  write('commit refs/heads/main\ncommitter bench <bench@skillpin.invalid> 1700000000 +0000\ndata 4\nbase\n');
  for (let s = 0; s < skills; s++) {
    const [name, files] = skillFiles(catalogs, r, s, next);
    for (const [file, content] of files)
      write(`M 100644 inline skills/${name}/${file}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
  }
  write('\n');
}

/** Runs one fast-import of repository `r` into `gitdir`. */
function importRepo(catalogs: Catalogs, gitdir: string, r: number, skills: number): Promise<void> {
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', gitdir], { env: GIT_ENV });
  const child = spawn('git', ['-c', 'pack.compression=1', '--git-dir', gitdir, 'fast-import', '--quiet'], {
    env: GIT_ENV,
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  const chunks: string[] = [];
  repoStream(catalogs, r, skills, (chunk) => chunks.push(chunk));
  child.stdin.end(chunks.join(''));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`fast-import of repo ${r} exited ${code}`)),
    ),
  );
}

export interface ShapesCatalog {
  /** The bare repositories, one per source. */
  gitdirs: string[];
  /** The skills written and their total bytes. */
  skills: number;
  bytes: number;
}

/** `repos` repositories of `skills` real-shaped skills under `dir` (made once, three fast-imports at a time). */
export async function shapesCatalog(
  catalogsDir: string,
  dir: string,
  repos = 1000,
  skills = 100,
): Promise<ShapesCatalog> {
  const root = path.join(dir, `shapes-${repos}x${skills}`);
  const gitdirs = Array.from({ length: repos }, (_, r) =>
    path.join(root, `r${String(r).padStart(4, '0')}.git`),
  );
  const done = path.join(root, 'done');
  if (!existsSync(done)) {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    const catalogs = measureCatalogs(catalogsDir);
    let r = 0;
    const worker = async () => {
      while (r < repos) {
        const mine = r++;
        await importRepo(catalogs, gitdirs[mine]!, mine, skills);
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    writeFileSync(done, `${catalogs.shapes.length} shapes, ${catalogs.words.length} words\n`);
  }
  const bytes = Number(execFileSync('du', ['-sb', root], { encoding: 'utf8' }).split('\t')[0]);
  return { gitdirs, skills: repos * skills, bytes };
}

/** The catalog's skills checked out as one folder of skills for the SDK's folder server (made once). */
export function shapesFolder(catalog: ShapesCatalog, folder: string): string {
  const done = path.join(folder, '.done');
  if (!existsSync(done)) {
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(folder, { recursive: true });
    for (const gitdir of catalog.gitdirs)
      execFileSync('sh', ['-c', `git --git-dir "${gitdir}" archive main skills | tar -x -C "${folder}"`], {
        env: GIT_ENV,
      });
    writeFileSync(done, '');
  }
  return path.join(folder, 'skills');
}

/** `npx tsx bench/realShapes.ts [catalogsDir]`: the measured shapes, summarised. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const { shapes, words } = measureCatalogs(process.argv[2] ?? '.skillpin/catalogs');
  const quantiles = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
    const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
    return `p10 ${at(0.1)}, p50 ${at(0.5)}, p90 ${at(0.9)}, p99 ${at(0.99)}, max ${at(1)}, mean ${mean.toFixed(0)}`;
  };
  console.log(`${shapes.length} skills, ${new Set(words).size} distinct words`);
  console.log(`  SKILL.md body bytes:    ${quantiles(shapes.map((s) => s.body))}`);
  console.log(`  description bytes:      ${quantiles(shapes.map((s) => s.description))}`);
  console.log(`  other files per skill:  ${quantiles(shapes.map((s) => s.files.length))}`);
  console.log(`  other file bytes:       ${quantiles(shapes.flatMap((s) => s.files))}`);
  console.log(
    `  skill bytes:            ${quantiles(shapes.map((s) => s.body + s.files.reduce((a, b) => a + b, 0)))}`,
  );
}
