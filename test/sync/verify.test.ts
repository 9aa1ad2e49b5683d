import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Catalog, createCatalog } from '../../src/catalog/index.ts';
import { type Config, loadConfig } from '../../src/config/index.ts';
import { skillDigest } from '../../src/index/index.ts';
import { buildSnapshot } from '../../src/mcp/snapshot.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { type Lockfile, lockedConfig } from '../../src/pins/lockfile.ts';
import { createSyncWorker, type SyncWorker } from '../../src/sync/worker.ts';
import { manualClock } from '../helpers/clock.ts';
import { git } from '../helpers/git.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { writeConfig } from '../helpers/server.ts';
import { makeSigningKeys, type SigningKeys, signingRepo, skill } from '../helpers/signing.ts';
import { tempDir } from '../helpers/temp.ts';

let keys: SigningKeys;
beforeAll(() => {
  keys = makeSigningKeys();
});

function start(config: Config): { catalog: Catalog; worker: SyncWorker } {
  const catalog = createCatalog();
  const worker = createSyncWorker({ config, catalog, logger: silentLogger(), clock: manualClock() });
  return { catalog, worker };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** The aggregate digest of a skill of one file, SKILL.md holding `text` (README: Aggregate digest). */
const manifestDigest = (text: string) =>
  `sha256:${sha256(`sha256:${sha256(text)} ${Buffer.byteLength(text)} SKILL.md\n`)}`;
const current = (catalog: Catalog) => catalog.state.sources[0]?.current;

describe('a source that requires signed commits', () => {
  it('serves a signed commit with its signer in provenance, and keeps it serving when the ref moves to an unsigned one', async () => {
    const repo = signingRepo(keys);
    const signed = repo.commit({ 'skills/a/SKILL.md': skill('a') }, { ssh: 'alice' });
    const config = loadConfig(
      writeConfig({
        sources: [
          {
            id: 'signed',
            path: repo.dir,
            ref: 'main',
            verify: { sshAllowedSigners: keys.allowedSigners },
          },
        ],
      }),
    );
    const { catalog, worker } = start(config);
    await worker.restore();
    expect(await worker.syncAll('test')).toEqual([{ id: 'signed', ok: true, commit: signed, changed: true }]);
    const ns = current(catalog)!;
    const signer = {
      type: 'ssh',
      identity: 'alice@example.com',
      key: keys.sshFingerprint.alice,
      object: 'commit',
    };
    expect(ns.signer).toEqual(signer);
    const skillA = ns.skills[0]!;
    expect(
      [...buildSnapshot(ns).skills.values()].find((served) => served.skill === skillA)!.entry._meta,
    ).toEqual({
      'dev.skillpin/repository': `local:${repo.dir}`,
      'dev.skillpin/commit': signed,
      'dev.skillpin/path': 'skills/a',
      'dev.skillpin/commitTime': ns.commitTime,
      'dev.skillpin/digest': skillDigest(skillA),
      'dev.skillpin/signer': 'alice@example.com',
      'dev.skillpin/signatureType': 'ssh',
    });
    // A listing page gives the signer once, in its namespace's record.
    expect(buildSnapshot(ns).record.provenance).toEqual({
      'dev.skillpin/repository': `local:${repo.dir}`,
      'dev.skillpin/commit': signed,
      'dev.skillpin/commitTime': ns.commitTime,
      'dev.skillpin/signer': 'alice@example.com',
      'dev.skillpin/signatureType': 'ssh',
    });

    const unsigned = repo.commit({ 'skills/a/SKILL.md': skill('a', 'unsigned change') });
    expect(await worker.trigger('signed', 'test')).toEqual({
      id: 'signed',
      ok: false,
      reason: 'source-unsigned',
      detail: `commit ${unsigned} is not signed`,
      serving: signed,
    });
    expect(current(catalog)!.commit).toBe(signed);
    expect(worker.status().failures).toEqual([
      { id: 'signed', reason: 'source-unsigned', detail: `commit ${unsigned} is not signed` },
    ]);
    // No index file was written for the refused commit: nothing of it can be served or restored.
    expect(existsSync(path.join(config.dataDir, 'index', 'signed', `${unsigned}.json`))).toBe(false);

    const next = repo.commit({ 'skills/a/SKILL.md': skill('a', 'signed again') }, { ssh: 'rsa' });
    expect(await worker.trigger('signed', 'test')).toMatchObject({ ok: true, commit: next });
    expect(current(catalog)!.signer).toMatchObject({ identity: 'rsa@example.com' });
    expect(worker.status().failures).toEqual([]);
    await worker.stop();
  });

  it('verifies again when the keys change: a restored commit whose signer is no longer allowed is not served', async () => {
    const repo = signingRepo(keys);
    const signed = repo.commit({ 'skills/a/SKILL.md': skill('a') }, { ssh: 'alice' });
    const file = writeConfig({
      sources: [{ id: 's', path: repo.dir, ref: 'main', verify: { sshAllowedSigners: keys.allowedSigners } }],
    });
    const first = start(loadConfig(file));
    await first.worker.restore();
    await first.worker.syncAll('test');
    await first.worker.stop();
    // The same dataDir under keys that no longer name alice.
    const config = loadConfig(file);
    const rsa = readFileSync(`${keys.ssh.rsa}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
    const other: Config = {
      ...config,
      sources: [
        {
          ...config.sources[0]!,
          verify: {
            require: 'commit',
            sshAllowedSigners: { label: 'rsa only', text: `rsa@x ${rsa}\n` },
            gpgKeys: [],
          },
        },
      ],
    };
    const second = start(other);
    await second.worker.restore();
    expect(current(second.catalog)).toBeUndefined();
    expect(await second.worker.syncAll('test')).toEqual([
      {
        id: 's',
        ok: false,
        reason: 'source-signer-unknown',
        detail: `signed by SSH key ${keys.sshFingerprint.alice}, which is not in sshAllowedSigners`,
      },
    ]);
    expect(second.worker.status().sources[0]!.current).toBeNull();
    expect(signed).toMatch(/^[0-9a-f]{40}$/);
    await second.worker.stop();
  });
});

describe('a remote source that requires a signed tag', () => {
  let root: string;
  let server: GitHttpServer;
  let repo: ReturnType<typeof signingRepo>;
  let v1: { commit: string; tag: string };
  const bare = () => path.join(root, 'signed.git');
  const publish = () => git(['--git-dir', bare(), 'fetch', '--quiet', '--force', repo.dir, '+refs/*:refs/*']);

  beforeAll(async () => {
    root = tempDir('skillpin-signed-remote-');
    repo = signingRepo(keys);
    git(['init', '--quiet', '--bare', '--initial-branch=main', bare()]);
    server = await startGitHttpServer({ root });
  });
  afterAll(() => server.close());

  it('fetches the tag with the commit, keeps it pinned, and verifies it again from the store alone', async () => {
    const commit = repo.commit({ 'skills/t/SKILL.md': skill('t') });
    const tag = repo.tag('v1', commit, { ssh: 'ecdsa' });
    publish();
    const config = loadConfig(
      writeConfig({
        sources: [
          {
            id: 'tagged',
            url: server.urlFor('signed.git'),
            ref: 'v1',
            verify: { sshAllowedSigners: keys.allowedSigners, require: 'tag' },
          },
        ],
      }),
    );
    const { catalog, worker } = start(config);
    await worker.restore();
    expect(await worker.syncAll('test')).toEqual([{ id: 'tagged', ok: true, commit, changed: true }]);
    expect(current(catalog)!.signer).toEqual({
      type: 'ssh',
      identity: 'ecdsa@example.com',
      key: keys.sshFingerprint.ecdsa,
      object: 'tag',
      tag,
    });
    const store = path.join(config.dataDir, 'repos', 'tagged.git');
    expect(git(['--git-dir', store, 'rev-parse', `refs/skillpin/tags/${commit}`])).toBe(tag);
    await worker.stop();

    // The index file gone, a restart rebuilds it from the store: the pinned tag is verified again, offline.
    rmSync(path.join(config.dataDir, 'index', 'tagged', `${commit}.json`));
    await server.close();
    const again = start(config);
    await again.worker.restore();
    expect(current(again.catalog)!.signer).toMatchObject({ object: 'tag', tag });
    await again.worker.stop();
    server = await startGitHttpServer({ root });
    v1 = { commit, tag };
  });

  it('serves a locked commit with the tag its lock entry recorded, fetched by id into an empty store', async () => {
    const config = loadConfig(
      writeConfig({
        sources: [
          {
            id: 'locked',
            url: server.urlFor('signed.git'),
            ref: 'v1',
            verify: { sshAllowedSigners: keys.allowedSigners, require: 'tag' },
          },
        ],
      }),
    );
    const signer = {
      type: 'ssh',
      identity: 'ecdsa@example.com',
      key: keys.sshFingerprint.ecdsa,
      object: 'tag',
    } as const;
    const lock: Lockfile = {
      version: 1,
      sources: [
        {
          id: 'locked',
          repository: server.urlFor('signed.git'),
          ref: 'v1',
          commit: v1.commit,
          commitTime: '2024-06-01T00:00:00.000Z',
          tree: git(['-C', repo.dir, 'rev-parse', `${v1.commit}^{tree}`]),
          signer: { ...signer, tag: v1.tag },
          skills: [
            {
              path: 'skills/t',
              name: 't',
              files: 1,
              bytes: Buffer.byteLength(skill('t')),
              digest: manifestDigest(skill('t')),
            },
          ],
        },
      ],
    };
    const locked = lockedConfig(config, lock, 'skillpin.lock');
    const { tree, skills } = lock.sources[0]!;
    expect(locked.sources[0]!.target).toEqual({
      kind: 'commit',
      commit: v1.commit,
      tag: v1.tag,
      ref: 'v1',
      lock: { tree, skills },
    });
    expect(locked.sources[0]!.pollMs).toBeUndefined();
    const { catalog, worker } = start(locked);
    await worker.restore();
    expect(await worker.syncAll('test')).toEqual([
      { id: 'locked', ok: true, commit: v1.commit, changed: true },
    ]);
    expect(current(catalog)!.signer).toEqual({ ...signer, tag: v1.tag });
    await worker.stop();
  });

  it('refuses a signed tag moved under another name: the tag object says v1, the ref release', async () => {
    repo.git(['update-ref', 'refs/tags/release', v1.tag]);
    publish();
    const config = loadConfig(
      writeConfig({
        sources: [
          {
            id: 'renamed',
            url: server.urlFor('signed.git'),
            ref: 'release',
            verify: { sshAllowedSigners: keys.allowedSigners, require: 'tag' },
          },
        ],
      }),
    );
    const { catalog, worker } = start(config);
    await worker.restore();
    expect(await worker.syncAll('test')).toEqual([
      {
        id: 'renamed',
        ok: false,
        reason: 'source-signature-invalid',
        detail: `tag ${v1.tag} is signed as "v1", and was reached through refs/tags/release: a signed tag serves only under its own name`,
      },
    ]);
    expect(current(catalog)).toBeUndefined();
    await worker.stop();
  });

  it('refuses a ref that moves to an unsigned tag, serving the signed one', async () => {
    const commit = repo.commit({ 'skills/t/SKILL.md': skill('t', 'two') });
    const tag = repo.tag('v2', commit, { ssh: 'alice' });
    publish();
    const config = loadConfig(
      writeConfig({
        sources: [
          {
            id: 'moving',
            url: server.urlFor('signed.git'),
            ref: 'v2',
            verify: { sshAllowedSigners: keys.allowedSigners, require: 'tag' },
          },
        ],
      }),
    );
    const { catalog, worker } = start(config);
    await worker.restore();
    await worker.syncAll('test');
    expect(current(catalog)!.signer?.tag).toBe(tag);
    const later = repo.commit({ 'skills/t/SKILL.md': skill('t', 'three') });
    repo.tag('v2', later);
    publish();
    expect(await worker.trigger('moving', 'test')).toMatchObject({ ok: false, reason: 'source-unsigned' });
    expect(current(catalog)!.commit).toBe(commit);
    await worker.stop();
  });
});
