import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, type VerifyConfig } from '../../src/config/index.ts';
import {
  type GitError,
  keyringOf,
  openLocalRepository,
  type Repository,
  resolveLocalTarget,
  verifyTarget,
} from '../../src/git/index.ts';
import { matchesPatternList, parseAllowedSigners } from '../../src/git/signature/allowedSigners.ts';
import { commitSignature, tagSignature } from '../../src/git/signature/payload.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { git } from '../helpers/git.ts';
import { makeSigningKeys, type SigningKeys, signingRepo, skill } from '../helpers/signing.ts';

let keys: SigningKeys;
let repo: ReturnType<typeof signingRepo>;
/** Commits of the signing repository, by what they test. */
const at: Record<string, string> = {};
const tags: Record<string, string> = {};

beforeAll(() => {
  keys = makeSigningKeys();
  repo = signingRepo(keys);
  at['ed25519'] = repo.commit({ 'skills/a/SKILL.md': skill('a') }, { ssh: 'alice' });
  at['ecdsa'] = repo.commit({ 'skills/a/SKILL.md': skill('a', 'two') }, { ssh: 'ecdsa' });
  at['rsa'] = repo.commit({ 'skills/a/SKILL.md': skill('a', 'three') }, { ssh: 'rsa' });
  at['unsigned'] = repo.commit({ 'skills/a/SKILL.md': skill('a', 'four') });
  at['unknown'] = repo.commit({ 'skills/a/SKILL.md': skill('a', 'five') }, { ssh: 'mallory' });
  at['filer'] = repo.commit({ 'skills/a/SKILL.md': skill('a', 'six') }, { ssh: 'filer' });
  at['tampered'] = repo.tampered(at['ed25519']!);
  at['openpgp'] = repo.commit({ 'skills/a/SKILL.md': skill('a', 'seven') }, { gpg: 'release' });
  at['stranger'] = repo.commit({ 'skills/a/SKILL.md': skill('a', 'eight') }, { gpg: 'stranger' });
  at['expired'] = repo.commit(
    { 'skills/a/SKILL.md': skill('a', 'nine') },
    { gpg: 'expired', program: keys.pastGpg },
    '2020-01-01T01:00:00Z',
  );
  tags['signed'] = repo.tag('v1', at['unsigned']!, { ssh: 'alice' });
  tags['unsigned'] = repo.tag('v0', at['ed25519']!);
  tags['openpgp'] = repo.tag('v2', at['unsigned']!, { gpg: 'release' });
});

const verify = (require: 'commit' | 'tag' = 'commit', gpg = true): VerifyConfig => ({
  require,
  sshAllowedSigners: { label: 'allowed_signers', text: readFileSync(keys.allowedSigners, 'utf8') },
  gpgKeys: gpg
    ? [
        { label: 'release.asc', text: readFileSync(keys.gpgPublic.release, 'utf8') },
        { label: 'expired.asc', text: readFileSync(keys.gpgPublic.expired, 'utf8') },
      ]
    : [],
});

async function outcome(
  r: Repository,
  target: { commit: string; tag?: string; ref?: string },
  config = verify(),
) {
  try {
    return await verifyTarget(r, target, await keyringOf(config));
  } catch (error) {
    return { reason: (error as GitError).code, detail: (error as GitError).message };
  }
}

describe('signature payloads', () => {
  it('splits a signed commit exactly as git does: the payload verify-commit hands to ssh-keygen', () => {
    const raw = Buffer.from(git(['-C', repo.dir, 'cat-file', 'commit', at['ed25519']!]) + '\n');
    const signed = commitSignature(raw)!;
    expect(signed.signature).toMatch(/^-----BEGIN SSH SIGNATURE-----\n[\s\S]+-----END SSH SIGNATURE-----\n$/);
    // git's own payload: the commit with its gpgsig header (and continuation lines) removed.
    const payload = raw.toString().replace(/^gpgsig [^\n]*\n(?: [^\n]*\n)*/m, '');
    expect(signed.payload.toString()).toBe(payload);
    expect(commitSignature(Buffer.from(git(['-C', repo.dir, 'cat-file', 'commit', at['unsigned']!])))).toBe(
      undefined,
    );
  });

  it('splits a signed tag at its last signature block', () => {
    const raw = Buffer.from(git(['-C', repo.dir, 'cat-file', 'tag', tags['signed']!]) + '\n');
    const signed = tagSignature(raw)!;
    expect(signed.payload.toString()).toBe(
      raw.toString().slice(0, raw.indexOf('-----BEGIN SSH SIGNATURE-----')),
    );
    expect(tagSignature(Buffer.from(git(['-C', repo.dir, 'cat-file', 'tag', tags['unsigned']!])))).toBe(
      undefined,
    );
  });
});

describe('allowed signers files', () => {
  it('reads principals, options and keys, and names the line that is wrong', () => {
    const pub = readFileSync(`${keys.ssh.alice}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
    const [line] = parseAllowedSigners(
      `# c\n\n"a b@x,c@x" namespaces="git,file",valid-after="20240101",valid-before="20250101Z" ${pub} comment\n`,
    );
    expect({ ...line!, publicKey: line!.publicKey.toString('base64') }).toEqual({
      principals: 'a b@x,c@x',
      publicKey: pub.split(' ')[1],
      certAuthority: false,
      namespaces: 'git,file',
      validAfter: new Date(2024, 0, 1).getTime(),
      validBefore: Date.UTC(2025, 0, 1),
    });
    expect(() => parseAllowedSigners(`a@x ${pub}\nb@x ssh-ed25519 AAAA\n`)).toThrow(
      'line 2: the key is not a valid ssh-ed25519 public key',
    );
    expect(() => parseAllowedSigners(`a@x bogus="1" ${pub}\n`)).toThrow('line 1: unknown option "bogus="1""');
    expect(() => parseAllowedSigners('just-a-name\n')).toThrow(
      'line 1: expected "principals [options] keytype base64-key [comment]"',
    );
  });

  it("matches namespaces as OpenSSH's pattern lists do", () => {
    expect(matchesPatternList('git', 'git,file')).toBe(true);
    expect(matchesPatternList('git', 'g?t')).toBe(true);
    expect(matchesPatternList('git', '*,!git')).toBe(false);
    expect(matchesPatternList('git', 'file')).toBe(false);
  });

  it('a key file that cannot be used is a ConfigError naming it', async () => {
    const bad = {
      require: 'commit' as const,
      sshAllowedSigners: { label: 'f: allowed', text: 'x\n' },
      gpgKeys: [],
    };
    await expect(keyringOf(bad)).rejects.toThrow(ConfigError);
    await expect(keyringOf(bad)).rejects.toThrow(
      'f: allowed: line 1: expected "principals [options] keytype base64-key [comment]"',
    );
    const pgp = { require: 'commit' as const, gpgKeys: [{ label: 'g: key.asc', text: 'not a key' }] };
    await expect(keyringOf(pgp)).rejects.toThrow(/^g: key\.asc: not an armored OpenPGP public key \(/);
  });
});

describe.each(BACKENDS)('signature verification, $name backend', ({ settings }) => {
  let r: Repository;
  beforeAll(async () => {
    r = await openLocalRepository(repo.dir, settings);
    return () => r.close();
  });

  it('accepts SSH commit signatures of ed25519, ECDSA and RSA keys, naming the principal and key', async () => {
    for (const [name, principal] of [
      ['ed25519', 'alice@example.com'],
      ['ecdsa', 'ecdsa@example.com'],
      ['rsa', 'rsa@example.com'],
    ] as const) {
      const key = keys.sshFingerprint[name === 'ed25519' ? 'alice' : name];
      expect(await outcome(r, { commit: at[name]! })).toEqual({
        type: 'ssh',
        identity: principal,
        key,
        object: 'commit',
      });
    }
  });

  it('accepts an OpenPGP commit signature, naming the primary key', async () => {
    expect(await outcome(r, { commit: at['openpgp']! })).toEqual({
      type: 'openpgp',
      identity: keys.gpgFingerprint.release,
      key: keys.gpgFingerprint.release,
      object: 'commit',
    });
  });

  it('refuses each bad case with its own reason', async () => {
    const reasons: Record<string, string> = {};
    for (const name of ['unsigned', 'unknown', 'filer', 'tampered', 'stranger', 'expired'])
      reasons[name] = ((await outcome(r, { commit: at[name]! })) as { reason: string }).reason;
    expect(reasons).toEqual({
      unsigned: 'source-unsigned',
      unknown: 'source-signer-unknown',
      filer: 'source-signer-not-allowed',
      tampered: 'source-signature-invalid',
      stranger: 'source-signer-unknown',
      expired: 'source-signer-expired',
    });
    expect(await outcome(r, { commit: at['unknown']! })).toEqual({
      reason: 'source-signer-unknown',
      detail: `signed by SSH key ${keys.sshFingerprint.mallory}, which is not in sshAllowedSigners`,
    });
    expect(await outcome(r, { commit: at['expired']! })).toEqual({
      reason: 'source-signer-expired',
      detail: `OpenPGP key ${keys.gpgFingerprint.expired} is no longer valid (expired on 2020-01-02T00:00:00.000Z)`,
    });
  });

  it('an OpenPGP signature with no gpgKeys configured is an unknown signer', async () => {
    expect(await outcome(r, { commit: at['openpgp']! }, verify('commit', false))).toEqual({
      reason: 'source-signer-unknown',
      detail: 'signed with an OpenPGP key, and no gpgKeys are configured',
    });
  });

  it('refuses an SSH key outside its valid-before at the commit time', async () => {
    const pub = readFileSync(`${keys.ssh.alice}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
    const config: VerifyConfig = {
      require: 'commit',
      sshAllowedSigners: { label: 'a', text: `alice@example.com valid-before="20240101Z" ${pub}\n` },
      gpgKeys: [],
    };
    expect(await outcome(r, { commit: at['ed25519']! }, config)).toMatchObject({
      reason: 'source-signer-expired',
    });
  });

  it('with require: tag, accepts a signed annotated tag on an unsigned commit and nothing else', async () => {
    const v1 = await resolveLocalTarget(r, 'v1');
    expect(v1).toEqual({ commit: at['unsigned'], tag: tags['signed'], ref: 'refs/tags/v1' });
    expect(await outcome(r, v1, verify('tag'))).toEqual({
      type: 'ssh',
      identity: 'alice@example.com',
      key: keys.sshFingerprint.alice,
      object: 'tag',
      tag: tags['signed'],
    });
    expect(await outcome(r, await resolveLocalTarget(r, 'v2'), verify('tag'))).toMatchObject({
      type: 'openpgp',
      identity: keys.gpgFingerprint.release,
      object: 'tag',
    });
    // The same tag under require: commit: the commit itself is unsigned.
    expect(await outcome(r, v1)).toMatchObject({ reason: 'source-unsigned' });
    expect(await outcome(r, await resolveLocalTarget(r, 'v0'), verify('tag'))).toEqual({
      reason: 'source-unsigned',
      detail: 'tag v0 is not signed',
    });
    expect(await outcome(r, { commit: at['unsigned']! }, verify('tag'))).toEqual({
      reason: 'source-unsigned',
      detail: 'verify.require is tag, and the ref names no annotated tag',
    });
    // A signed tag presented for another commit proves nothing about that commit.
    expect(await outcome(r, { commit: at['ed25519']!, tag: tags['signed']! }, verify('tag'))).toEqual({
      reason: 'source-unsigned',
      detail: `tag v1 does not point at commit ${at['ed25519']}`,
    });
  });

  it('with require: tag, refuses a signed tag reached through a ref of another name, naming both', async () => {
    // Whoever can move refs on the remote puts the tag object signed as v1 under refs/tags/release.
    git(['-C', repo.dir, 'update-ref', 'refs/tags/release', tags['signed']!]);
    const release = await resolveLocalTarget(r, 'release');
    expect(release).toEqual({ commit: at['unsigned'], tag: tags['signed'], ref: 'refs/tags/release' });
    expect(await outcome(r, release, verify('tag'))).toEqual({
      reason: 'source-signature-invalid',
      detail: `tag ${tags['signed']} is signed as "v1", and was reached through refs/tags/release: a signed tag serves only under its own name`,
    });
    // The same object named as the configured (short) ref it was locked from, or through no ref at all.
    expect(await outcome(r, { ...release, ref: 'v1' }, verify('tag'))).toMatchObject({ object: 'tag' });
    expect(await outcome(r, { ...release, ref: 'release' }, verify('tag'))).toMatchObject({
      reason: 'source-signature-invalid',
    });
    expect(await outcome(r, { commit: at['unsigned']!, tag: tags['signed']! }, verify('tag'))).toEqual({
      reason: 'source-signature-invalid',
      detail: `tag ${tags['signed']} was reached through no known ref, so its name cannot be checked`,
    });
  });
});
