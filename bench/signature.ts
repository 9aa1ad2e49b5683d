/**
 * What pins cost, side by side in one run:
 *  - Signature verification per commit against indexing that commit (the peer: what every sync does anyway), on
 *    the synthetic repository (1000 skills × 5 files). Its tree is committed again, signed with each key type
 *    (SSH ed25519, ECDSA P-256, RSA 2048; OpenPGP ed25519, RSA 3072). For each: the first verification (keys
 *    parsed, openpgp loaded) and the median of the next ones (steady state); the index time is the median of
 *    cold indexes (fresh repository handle and caches) of the same commit with the cli backend.
 *  - `skillpin lock` on the example config (examples/skillpin.yaml), against `skillpin sync` of the same config
 *    into a fresh dataDir and against the CLI's start-up (`--version`), each in its own process.
 * Usage: npx tsx bench/signature.ts [runs=5]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { VerifyConfig } from '../src/config/index.ts';
import { keyringOf, openLocalRepository, readBlob, verifyTarget, walkCommit } from '../src/git/index.ts';
import { indexCommit } from '../src/index/index.ts';
import { buildFixtures } from '../fixtures-repos/build.ts';
import { gitEnv } from '../test/helpers/git.ts';
import { makeSigningKeys } from '../test/helpers/signing.ts';
import { removeTempDirs } from '../test/helpers/temp.ts';
import { syntheticRepo } from './synthetic.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const runs = Number(process.argv[2] ?? '5');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const synthetic = syntheticRepo(path.join(root, '.skillpin', 'bench'));
const keys = makeSigningKeys();
const gpgEnv = { ...gitEnv(), GNUPGHOME: keys.gnupgHome };
execFileSync(
  'gpg',
  ['--batch', '--passphrase', '', '--quick-gen-key', 'RSA <rsa@example.com>', 'rsa3072', 'sign', '0'],
  {
    env: gpgEnv,
    stdio: 'ignore',
  },
);
const rsaArmored = execFileSync('gpg', ['--armor', '--export', 'rsa@example.com'], {
  env: gpgEnv,
  encoding: 'utf8',
});

// A clone sharing the synthetic repository's objects, where the signed commits are written.
const gitdir = path.join(mkdtempSync(path.join(tmpdir(), 'skillpin-sigbench-')), 'signed.git');
execFileSync('git', ['clone', '--quiet', '--bare', '--shared', synthetic.gitdir, gitdir], { env: gitEnv() });
const tree = execFileSync('git', ['--git-dir', gitdir, 'rev-parse', `${synthetic.base}^{tree}`], {
  encoding: 'utf8',
}).trim();
const commitSigned = (config: string[], key: string) =>
  execFileSync(
    'git',
    ['--git-dir', gitdir, ...config, 'commit-tree', tree, '-p', synthetic.base, `-S${key}`, '-m', 'signed'],
    {
      env: gpgEnv,
      encoding: 'utf8',
    },
  ).trim();
const ssh = (name: 'alice' | 'ecdsa' | 'rsa') => commitSigned(['-c', 'gpg.format=ssh'], keys.ssh[name]);
const cases: Array<{ label: string; commit: string; verify: VerifyConfig }> = [
  ['SSH ed25519', ssh('alice')],
  ['SSH ECDSA P-256', ssh('ecdsa')],
  ['SSH RSA 2048 (rsa-sha2-512)', ssh('rsa')],
].map(([label, commit]) => ({
  label: label!,
  commit: commit!,
  verify: {
    require: 'commit',
    sshAllowedSigners: { label: 'allowed_signers', text: readFileSync(keys.allowedSigners, 'utf8') },
    gpgKeys: [],
  },
}));
cases.push(
  {
    label: 'OpenPGP ed25519',
    commit: commitSigned([], keys.gpgFingerprint.release),
    verify: {
      require: 'commit',
      gpgKeys: [{ label: 'release', text: readFileSync(keys.gpgPublic.release, 'utf8') }],
    },
  },
  {
    label: 'OpenPGP RSA 3072',
    commit: commitSigned([], 'rsa@example.com'),
    verify: { require: 'commit', gpgKeys: [{ label: 'rsa', text: rsaArmored }] },
  },
);

async function indexMs(commit: string): Promise<number> {
  const repo = await openLocalRepository(gitdir, { backend: 'cli' });
  const started = performance.now();
  const walked = await walkCommit(repo, commit);
  await indexCommit({ ...walked, readBlob: (id) => readBlob(repo, id) });
  const ms = performance.now() - started;
  await repo.close();
  return ms;
}

async function verifyMs(commit: string, verify: VerifyConfig): Promise<{ first: number; steady: number }> {
  const repo = await openLocalRepository(gitdir, { backend: 'cli' });
  let started = performance.now();
  await verifyTarget(repo, { commit }, await keyringOf({ ...verify }));
  const first = performance.now() - started;
  const keyring = await keyringOf(verify);
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    started = performance.now();
    await verifyTarget(repo, { commit }, keyring);
    times.push(performance.now() - started);
  }
  await repo.close();
  return { first, steady: median(times) };
}

console.log(
  `signature bench: ${synthetic.files} files in 1000 skills; shared CPU, so read the ratios, not the times`,
);
for (const { label, commit, verify } of cases) {
  const indexes: number[] = [];
  for (let i = 0; i < runs; i++) indexes.push(await indexMs(commit));
  const { first, steady } = await verifyMs(commit, verify);
  const index = median(indexes);
  console.log(
    `  ${label.padEnd(28)} index ${index.toFixed(0).padStart(5)} ms | verify first ${first.toFixed(1).padStart(6)} ms, ` +
      `steady ${steady.toFixed(2).padStart(6)} ms | steady / index ${((steady / index) * 100).toFixed(3)}%, ` +
      `first / index ${((first / index) * 100).toFixed(1)}%`,
  );
}

// lock on the example config, the fixtures it names built into a folder of this run.
const fixtures = await buildFixtures(mkdtempSync(path.join(tmpdir(), 'skillpin-sigbench-fx-')));
const configDir = mkdtempSync(path.join(tmpdir(), 'skillpin-sigbench-lock-'));
const example = readFileSync(path.join(root, 'examples', 'skillpin.yaml'), 'utf8');
const configFile = path.join(configDir, 'skillpin.yaml');
writeFileSync(
  configFile,
  example
    .replaceAll('../.skillpin/fixtures/', `${path.dirname(fixtures['catalog']!.gitdir)}/`)
    .replace(/^dataDir: .*$/m, stringify({ dataDir: path.join(configDir, 'data') }).trim()),
);
const cli = (...args: string[]) => {
  const started = performance.now();
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'src', 'cli.ts'), ...args], {
    cwd: root,
    env: { ...process.env, SKILLPIN_LOG_LEVEL: 'silent' },
    stdio: 'ignore',
  });
  if (result.status !== 0) throw new Error(`skillpin ${args.join(' ')} exited ${result.status}`);
  return performance.now() - started;
};
const times = { version: [] as number[], lock: [] as number[], sync: [] as number[] };
for (let i = 0; i < runs; i++) {
  times.version.push(cli('--version'));
  times.lock.push(cli('lock', '-c', configFile));
  execFileSync('rm', ['-rf', path.join(configDir, 'data')]);
  times.sync.push(cli('sync', '-c', configFile));
}
const [version, lock, sync] = [median(times.version), median(times.lock), median(times.sync)];
console.log(`lock bench: examples/skillpin.yaml (3 sources, local fixture repositories), median of ${runs}`);
console.log(`  skillpin --version          ${version.toFixed(0).padStart(5)} ms (start-up)`);
console.log(`  skillpin sync, fresh dataDir ${sync.toFixed(0).padStart(5)} ms`);
console.log(
  `  skillpin lock               ${lock.toFixed(0).padStart(5)} ms | lock / sync ${(lock / sync).toFixed(2)}x, ` +
    `lock - start-up ${(lock - version).toFixed(0)} ms`,
);
removeTempDirs();
