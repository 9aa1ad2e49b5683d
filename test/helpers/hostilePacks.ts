import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createDeflate, deflateSync } from 'node:zlib';
import { TEST_FIXTURES_DIR } from './fixtures.ts';
import { gitEnv } from './git.ts';

const TYPES = { commit: 1, tree: 2, blob: 3 } as const;

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
 * A pack that does not end while anyone reads it: a header claiming ENDLESS_OBJECTS objects, then distinct
 * 64 KiB blobs (a counter and fixed bytes, stored without compression).
 */
export function* endlessPack(): Generator<Buffer> {
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(ENDLESS_OBJECTS, 8);
  yield header;
  const filler = createHash('sha512').update('endless').digest();
  const content = Buffer.alloc(64 * 1024);
  for (let at = 0; at < content.length; at += filler.length) filler.copy(content, at);
  for (let n = 0n; ; n++) {
    content.writeBigUInt64BE(n, 0);
    yield Buffer.concat([entryHeader('blob', content.length), deflateSync(content, { level: 0 })]);
  }
}

/** Bytes of zeros in the compression bomb: 1 GiB. */
export const BOMB_BYTES = 1024 ** 3;

/** A tree object's content: `<mode> <name>\0<id>` entries, in git's order. */
const tree = (entries: Array<[mode: string, name: string, id: string]>) =>
  Buffer.concat(
    entries.map(([mode, name, id]) =>
      Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(id, 'hex')]),
    ),
  );

/** The zlib stream of BOMB_BYTES zeros (level 9: about 1 MB), and their blob id, computed in 1 MiB steps. */
async function zeros(): Promise<{ id: string; deflated: Buffer }> {
  const hash = createHash('sha1').update(`blob ${BOMB_BYTES}\0`);
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => deflate.once('end', resolve));
  const mib = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < BOMB_BYTES / mib.length; i++) {
    hash.update(mib);
    if (!deflate.write(mib)) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  deflate.end();
  await ended;
  return { id: hash.digest('hex'), deflated: Buffer.concat(out) };
}

export interface BombRepo {
  /** A bare repository whose `main` is `commit`. */
  gitdir: string;
  commit: string;
  /** The blob of `skills/big/zeros.bin`: BOMB_BYTES zeros. */
  blob: string;
}

/**
 * A compression bomb as a repository, built byte for byte (so its commit is the same in every run): one commit
 * whose `skills/big/` holds a valid SKILL.md and `zeros.bin`, 1 GiB of zeros that a pack of about 1 MB carries.
 * Built once into the test fixtures folder; a server that serves it reuses the stored bytes.
 */
export async function bombRepo(): Promise<BombRepo> {
  const gitdir = path.join(TEST_FIXTURES_DIR, 'bomb.git');
  const facts = path.join(TEST_FIXTURES_DIR, 'bomb.json');
  if (existsSync(facts))
    return { gitdir, ...(JSON.parse(readFileSync(facts, 'utf8')) as Omit<BombRepo, 'gitdir'>) };
  const big = await zeros();
  const skillMd = Buffer.from(
    '---\nname: big\ndescription: A skill holding a gigabyte of zeros.\n---\nDo not read.\n',
  );
  const skillMdId = objectId('blob', skillMd);
  const bigTree = tree([
    ['100644', 'SKILL.md', skillMdId],
    ['100644', 'zeros.bin', big.id],
  ]);
  const skills = tree([['40000', 'big', objectId('tree', bigTree)]]);
  const root = tree([['40000', 'skills', objectId('tree', skills)]]);
  const commit = Buffer.from(
    `tree ${objectId('tree', root)}\nauthor t <t@t.invalid> 1714521600 +0000\ncommitter t <t@t.invalid> 1714521600 +0000\n\nbomb\n`,
  );
  const entries = [
    Buffer.concat([entryHeader('commit', commit.length), deflateSync(commit)]),
    Buffer.concat([entryHeader('tree', root.length), deflateSync(root)]),
    Buffer.concat([entryHeader('tree', skills.length), deflateSync(skills)]),
    Buffer.concat([entryHeader('tree', bigTree.length), deflateSync(bigTree)]),
    Buffer.concat([entryHeader('blob', skillMd.length), deflateSync(skillMd)]),
    Buffer.concat([entryHeader('blob', BOMB_BYTES), big.deflated]),
  ];
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
  const made = { commit: commitId, blob: big.id };
  try {
    renameSync(building, gitdir);
    writeFileSync(facts, JSON.stringify(made));
  } catch {
    rmSync(building, { recursive: true, force: true });
  }
  return { gitdir, ...made };
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
