import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createDeflate, deflateSync } from 'node:zlib';
import { MAX_LARGE_BLOB_BYTES, MAX_OBJECT_BYTES } from '../../src/git/limits.ts';
import { TEST_FIXTURES_DIR } from './fixtures.ts';
import { gitEnv } from './git.ts';

const TYPES = { commit: 1, tree: 2, blob: 3, tag: 4, 'ref-delta': 7 } as const;

/** A pack entry's header: type in bits 4-6 of the first byte, the size in base-128 after its low four bits. */
function entryHeader(type: keyof typeof TYPES, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (TYPES[type] << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

const objectId = (type: string, content: Buffer) =>
  createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');

/** Objects the endless pack claims: at 64 KiB each, 64 GB (git refuses a count near 2^32 outright). */
const ENDLESS_OBJECTS = 1_000_000;

/**
 * A pack that does not end while anyone reads it: a header claiming ENDLESS_OBJECTS objects, then `first` (an
 * entry, when given), then distinct 64 KiB blobs (a counter and fixed bytes, stored without compression).
 */
export function* endlessPack(first?: Buffer): Generator<Buffer> {
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(ENDLESS_OBJECTS, 8);
  yield header;
  if (first !== undefined) yield first;
  const filler = createHash('sha512').update('endless').digest();
  const content = Buffer.alloc(64 * 1024);
  for (let at = 0; at < content.length; at += filler.length) filler.copy(content, at);
  for (let n = 0n; ; n++) {
    content.writeBigUInt64BE(n, 0);
    yield Buffer.concat([entryHeader('blob', content.length), deflateSync(content, { level: 0 })]);
  }
}

/** A delta's sizes: little-endian base-128. */
const deltaSize = (size: number) => {
  const bytes: number[] = [];
  for (let rest = size; ; rest = Math.floor(rest / 128)) {
    if (rest < 128) return [...bytes, rest];
    bytes.push((rest & 0x7f) | 0x80);
  }
};

/**
 * A pack entry `git index-pack` takes, while its header says the object is over MAX_OBJECT_BYTES: a commit, tree
 * or tag of MAX_OBJECT_BYTES + 1 zeros; or a delta (against an object the pack does not hold) whose header says
 * it builds an object of that size (`'delta-result'`) or needs a base of that size (`'delta-base'`).
 */
export async function oversizedEntry(kind: 'commit' | 'tree' | 'tag' | 'delta-result' | 'delta-base') {
  const over = MAX_OBJECT_BYTES + 1;
  if (kind === 'delta-result' || kind === 'delta-base') {
    // The two sizes, then one instruction: insert one byte.
    const delta = Buffer.from([
      ...deltaSize(kind === 'delta-base' ? over : 1),
      ...deltaSize(kind === 'delta-result' ? over : 1),
      1,
      0x78,
    ]);
    return Buffer.concat([
      entryHeader('ref-delta', delta.length),
      Buffer.alloc(20, 0xab),
      deflateSync(delta),
    ]);
  }
  return Buffer.concat([entryHeader(kind, over), (await zeros(over)).deflated]);
}

/**
 * A blob entry whose header declares 100 bytes while its zlib stream inflates to 64 MiB of zeros (about 64 KB of
 * it): a bomb behind a small header.
 */
export async function lyingEntry(): Promise<Buffer> {
  return Buffer.concat([entryHeader('blob', 100), (await zeros(MAX_OBJECT_BYTES)).deflated]);
}

/** Bytes of zeros in the compression bomb: 1 GiB. */
export const BOMB_BYTES = 1024 ** 3;

/** A file of a built repository: its bytes, or a count of zeros (deflated as they are made, never held). */
export type BuiltFile = Buffer | { readonly zeros: number };

/** The zlib stream of `size` zeros (level 9: about a thousandth of them), and their blob id, in 1 MiB steps. */
async function zeros(size: number): Promise<{ id: string; deflated: Buffer }> {
  const hash = createHash('sha1').update(`blob ${size}\0`);
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => deflate.once('end', resolve));
  const mib = Buffer.alloc(1024 * 1024);
  for (let left = size; left > 0; left -= mib.length) {
    const part = left < mib.length ? mib.subarray(0, left) : mib;
    hash.update(part);
    if (!deflate.write(part)) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  deflate.end();
  await ended;
  return { id: hash.digest('hex'), deflated: Buffer.concat(out) };
}

/** A folder of the tree being built: its files by name, and its folders. */
interface Folder {
  files: Map<string, string>;
  folders: Map<string, Folder>;
}

/** A tree object's content: `<mode> <name>\0<id>` entries, in git's order (a folder sorts as `<name>/`). */
const tree = (entries: Array<[mode: string, name: string, id: string]>) =>
  Buffer.concat(
    entries
      .map(([mode, name, id]) => ({ mode, name, id, key: mode === '40000' ? `${name}/` : name }))
      .sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)))
      .map(({ mode, name, id }) => Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(id, 'hex')])),
  );

export interface BuiltRepo {
  /** A bare repository whose `main` is `commit`. */
  gitdir: string;
  commit: string;
  /** The blob id of each file, by its path. */
  blobs: Record<string, string>;
}

/**
 * A repository built byte for byte (so its commit is the same in every run): one commit (message `message`) of
 * `files`, in one pack whose objects are stored whole, each deflated once (a blob of zeros at level 9). Built once
 * into the test fixtures folder as `<name>.git`; a server that serves it reuses the stored bytes.
 */
export async function builtRepo(
  name: string,
  message: string,
  files: Record<string, BuiltFile>,
): Promise<BuiltRepo> {
  const gitdir = path.join(TEST_FIXTURES_DIR, `${name}.git`);
  const facts = path.join(TEST_FIXTURES_DIR, `${name}.repo.json`);
  // What it is built of: a repository built before of other files is built again.
  const key = createHash('sha1').update(message);
  for (const [file, content] of Object.entries(files))
    key.update(`${file}\0${'zeros' in content ? `${content.zeros} zeros` : objectId('blob', content)}\0`);
  const recipe = key.digest('hex');
  const built = existsSync(facts)
    ? (JSON.parse(readFileSync(facts, 'utf8')) as Omit<BuiltRepo, 'gitdir'> & { recipe: string })
    : undefined;
  if (built?.recipe === recipe) return { gitdir, commit: built.commit, blobs: built.blobs };
  rmSync(gitdir, { recursive: true, force: true });
  const entries: Buffer[] = [];
  const blobs: Record<string, string> = {};
  const root: Folder = { files: new Map(), folders: new Map() };
  for (const [file, content] of Object.entries(files)) {
    const size = 'zeros' in content ? content.zeros : content.length;
    const made =
      'zeros' in content
        ? await zeros(content.zeros)
        : { id: objectId('blob', content), deflated: deflateSync(content) };
    entries.push(Buffer.concat([entryHeader('blob', size), made.deflated]));
    blobs[file] = made.id;
    const parts = file.split('/');
    let folder = root;
    for (const part of parts.slice(0, -1)) {
      if (!folder.folders.has(part)) folder.folders.set(part, { files: new Map(), folders: new Map() });
      folder = folder.folders.get(part)!;
    }
    folder.files.set(parts.at(-1)!, made.id);
  }
  const treeOf = (folder: Folder): string => {
    const content = tree([
      ...[...folder.files].map(([file, id]): [string, string, string] => ['100644', file, id]),
      ...[...folder.folders].map(([sub, inner]): [string, string, string] => ['40000', sub, treeOf(inner)]),
    ]);
    entries.push(Buffer.concat([entryHeader('tree', content.length), deflateSync(content)]));
    return objectId('tree', content);
  };
  const commit = Buffer.from(
    `tree ${treeOf(root)}\nauthor t <t@t.invalid> 1714521600 +0000\ncommitter t <t@t.invalid> 1714521600 +0000\n\n${message}\n`,
  );
  entries.push(Buffer.concat([entryHeader('commit', commit.length), deflateSync(commit)]));
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(entries.length, 8);
  const body = Buffer.concat([header, ...entries]);
  const trailer = createHash('sha1').update(body).digest();
  // Built aside and renamed into place: test files building it at once never see half of it.
  const building = `${gitdir}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', building], { env: gitEnv() });
  const pack = path.join(building, 'objects', 'pack', `pack-${trailer.toString('hex')}.pack`);
  mkdirSync(path.dirname(pack), { recursive: true });
  writeFileSync(pack, Buffer.concat([body, trailer]));
  execFileSync('git', ['--git-dir', building, 'index-pack', pack], { env: gitEnv(), stdio: 'ignore' });
  const commitId = objectId('commit', commit);
  execFileSync('git', ['--git-dir', building, 'update-ref', 'refs/heads/main', commitId], { env: gitEnv() });
  const made = { commit: commitId, blobs };
  try {
    renameSync(building, gitdir);
  } catch {
    // Another test file built it meanwhile: the same bytes.
    rmSync(building, { recursive: true, force: true });
  }
  writeFileSync(facts, JSON.stringify({ ...made, recipe }));
  return { gitdir, ...made };
}

export interface BombRepo {
  /** A bare repository whose `main` is `commit`. */
  gitdir: string;
  commit: string;
  /** The blob of `skills/big/zeros.bin`: BOMB_BYTES zeros. */
  blob: string;
}

/**
 * A compression bomb as a repository: one commit whose `skills/big/` holds a valid SKILL.md and `zeros.bin`,
 * 1 GiB of zeros that a pack of about 1 MB carries.
 */
export async function bombRepo(): Promise<BombRepo> {
  const skillMd = Buffer.from(
    '---\nname: big\ndescription: A skill holding a gigabyte of zeros.\n---\nDo not read.\n',
  );
  const built = await builtRepo('bomb', 'bomb', {
    'skills/big/SKILL.md': skillMd,
    'skills/big/zeros.bin': { zeros: BOMB_BYTES },
  });
  return { gitdir: built.gitdir, commit: built.commit, blob: built.blobs['skills/big/zeros.bin']! };
}

/** A SKILL.md that passes every check, of a skill named `name`. */
const validSkillMd = (name: string) =>
  Buffer.from(`---\nname: ${name}\ndescription: The ${name} skill, for tests.\n---\nUse it with care.\n`);

/**
 * The files of the large blob repository: a skill that serves (`skills/good`), and one holding a blob one byte
 * over MAX_OBJECT_BYTES (`skills/large/data.bin`, zeros); a file outside `skills` beside them.
 */
export const LARGE_BLOB_FILES = {
  'README.md': Buffer.from('Two skills, one of them too large.\n'),
  'skills/good/SKILL.md': validSkillMd('good'),
  'skills/good/notes.md': Buffer.from('Notes the good skill serves.\n'),
  'skills/large/SKILL.md': validSkillMd('large'),
  'skills/large/data.bin': { zeros: MAX_OBJECT_BYTES + 1 },
} as const;

/** LARGE_BLOB_FILES as a repository: a commit of about 70 KB that holds 64 MiB. */
export function largeBlobRepo(): Promise<BuiltRepo> {
  return builtRepo('large-blob', 'a blob over the limit', LARGE_BLOB_FILES);
}

/** LARGE_BLOB_FILES without the large blob: what the rest of that repository costs to fetch and serve. */
export function withoutLargeBlobRepo(): Promise<BuiltRepo> {
  const { 'skills/large/data.bin': _, ...rest } = LARGE_BLOB_FILES;
  return builtRepo('without-large-blob', 'a blob over the limit', rest);
}

/**
 * LARGE_BLOB_FILES and a third skill holding a blob (`skills/larger/data.bin`) that takes the blobs over
 * MAX_OBJECT_BYTES one byte past MAX_LARGE_BLOB_BYTES together; each alone is under it.
 */
export function largeBlobsRepo(): Promise<BuiltRepo> {
  return builtRepo('large-blobs', 'blobs over the limit, past their bound together', {
    ...LARGE_BLOB_FILES,
    'skills/larger/SKILL.md': validSkillMd('larger'),
    'skills/larger/data.bin': { zeros: MAX_LARGE_BLOB_BYTES - MAX_OBJECT_BYTES },
  });
}

/** A self-signed certificate for 127.0.0.1, made with openssl into `dir`: for a loopback https remote. */
export function loopbackCertificate(dir: string): { key: string; cert: string; certFile: string } {
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}

/**
 * A bare repository `<root>/many.git` whose `main` is one commit holding `count` tiny files (`f/<n>`, each its own
 * number): a pack of `count` blobs, some 20 bytes each, and a few trees. Returns the commit.
 */
export function manyObjectsRepo(root: string, count: number): string {
  const gitdir = path.join(root, 'many.git');
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', gitdir], { env: gitEnv() });
  const files: string[] = [];
  for (let n = 0; n < count; n++) files.push(`M 100644 inline f/${n}\ndata ${String(n).length}\n${n}\n`);
  const script = `commit refs/heads/main\ncommitter t <t@t.invalid> 1714521600 +0000\ndata 5\nmany\n${files.join('')}\n`;
  execFileSync('git', ['--git-dir', gitdir, 'fast-import', '--quiet'], { env: gitEnv(), input: script });
  return execFileSync('git', ['--git-dir', gitdir, 'rev-parse', 'main'], { env: gitEnv() }).toString().trim();
}
