import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gitEnv } from './git.ts';
import { tempDir } from './temp.ts';

/** SSH keys the tests sign with: three allowed key types, one key only allowed for files, one unknown. */
export type SshKeyName = 'alice' | 'ecdsa' | 'rsa' | 'filer' | 'mallory';
/** OpenPGP keys: a release key, one that expired in 2020 (a day after it was made), one nobody configured. */
export type GpgKeyName = 'release' | 'expired' | 'stranger';

export interface SigningKeys {
  dir: string;
  /** Private key files. */
  ssh: Record<SshKeyName, string>;
  /** `SHA256:…`, as `ssh-keygen -l` prints it. */
  sshFingerprint: Record<SshKeyName, string>;
  /** alice, ecdsa and rsa for every namespace; filer with namespaces="file"; mallory absent. */
  allowedSigners: string;
  gnupgHome: string;
  /** Primary key fingerprints (uppercase hex). */
  gpgFingerprint: Record<GpgKeyName, string>;
  /** Armored public key files of release and expired (stranger's is never exported). */
  gpgPublic: Record<'release' | 'expired', string>;
  /** A gpg that believes it is 2020-01-01T01:00:00Z, when the expired key was still valid. */
  pastGpg: string;
}

const run = (command: string, args: string[], env: NodeJS.ProcessEnv = gitEnv()) =>
  execFileSync(command, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** Generates every key into a temp folder of the test (`ssh-keygen`, `gpg --batch`), with an isolated GNUPGHOME. */
export function makeSigningKeys(): SigningKeys {
  const dir = tempDir('skillpin-keys-');
  const types: Record<SshKeyName, string[]> = {
    alice: ['-t', 'ed25519'],
    ecdsa: ['-t', 'ecdsa', '-b', '256'],
    rsa: ['-t', 'rsa', '-b', '2048'],
    filer: ['-t', 'ed25519'],
    mallory: ['-t', 'ed25519'],
  };
  const ssh = {} as Record<SshKeyName, string>;
  const sshFingerprint = {} as Record<SshKeyName, string>;
  for (const [name, type] of Object.entries(types) as Array<[SshKeyName, string[]]>) {
    const file = path.join(dir, `ssh-${name}`);
    run('ssh-keygen', ['-q', ...type, '-N', '', '-C', name, '-f', file]);
    ssh[name] = file;
    sshFingerprint[name] = run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`]).split(' ')[1]!;
  }
  const pub = (name: SshKeyName) => readFileSync(`${ssh[name]}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
  const allowedSigners = path.join(dir, 'allowed_signers');
  writeFileSync(
    allowedSigners,
    [
      '# who may sign skills',
      `alice@example.com ${pub('alice')}`,
      `ecdsa@example.com ${pub('ecdsa')}`,
      `"rsa@example.com" ${pub('rsa')} a comment`,
      `filer@example.com namespaces="file" ${pub('filer')}`,
      '',
    ].join('\n'),
  );
  const gnupgHome = path.join(dir, 'gnupg');
  mkdirSync(gnupgHome, { mode: 0o700 });
  const gpgEnv = { ...gitEnv(), GNUPGHOME: gnupgHome };
  const gpg = (...args: string[]) => run('gpg', ['--batch', '--no-tty', '--passphrase', '', ...args], gpgEnv);
  gpg('--quick-gen-key', 'Release <release@example.com>', 'ed25519', 'sign', '0');
  gpg('--quick-gen-key', 'Stranger <stranger@example.com>', 'ed25519', 'sign', '0');
  gpg(
    '--faked-system-time',
    '20200101T000000',
    '--quick-gen-key',
    'Expired <expired@example.com>',
    'ed25519',
    'sign',
    '1d',
  );
  const fingerprint = (uid: string) =>
    /^fpr:+([0-9A-F]{40}):/m.exec(gpg('--with-colons', '--list-keys', uid))![1]!;
  const gpgFingerprint = {
    release: fingerprint('release@example.com'),
    expired: fingerprint('expired@example.com'),
    stranger: fingerprint('stranger@example.com'),
  };
  const gpgPublic = {
    release: path.join(dir, 'release.asc'),
    expired: path.join(dir, 'expired.asc'),
  };
  writeFileSync(gpgPublic.release, gpg('--armor', '--export', gpgFingerprint.release));
  writeFileSync(gpgPublic.expired, gpg('--armor', '--export', gpgFingerprint.expired));
  const pastGpg = path.join(dir, 'past-gpg');
  writeFileSync(pastGpg, '#!/bin/sh\nexec gpg --faked-system-time 20200101T010000 "$@"\n');
  chmodSync(pastGpg, 0o755);
  return { dir, ssh, sshFingerprint, allowedSigners, gnupgHome, gpgFingerprint, gpgPublic, pastGpg };
}

/** How to sign: with an SSH key, or an OpenPGP key (by fingerprint, through `program` when given). */
export type Signing = { ssh: SshKeyName } | { gpg: GpgKeyName; program?: string };

/** A work tree whose commits and tags are signed as asked, with real `git commit -S` and `git tag -s`. */
export function signingRepo(keys: SigningKeys, dir = tempDir('skillpin-signed-')) {
  let time = Date.parse('2024-06-01T00:00:00Z') / 1000;
  const git = (args: string[], signing?: Signing, date?: string) => {
    const config =
      signing === undefined
        ? []
        : 'ssh' in signing
          ? ['-c', 'gpg.format=ssh', '-c', `user.signingkey=${keys.ssh[signing.ssh]}`]
          : [
              '-c',
              `gpg.program=${signing.program ?? 'gpg'}`,
              '-c',
              `user.signingkey=${keys.gpgFingerprint[signing.gpg]}`,
            ];
    return run('git', [...config, '-C', dir, ...args], {
      ...gitEnv(date ?? `${time++} +0000`),
      GNUPGHOME: keys.gnupgHome,
    });
  };
  git(['init', '--quiet', '--initial-branch=main']);
  return {
    dir,
    git,
    /** Writes `files`, commits (signed when asked) and returns the commit. */
    commit(files: Record<string, string>, signing?: Signing, date?: string): string {
      for (const [file, content] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), content);
      }
      git(['add', '--all']);
      git(
        ['commit', '--quiet', '--allow-empty', ...(signing === undefined ? [] : ['-S']), '-m', 'update'],
        signing,
        date,
      );
      return git(['rev-parse', 'HEAD']);
    },
    /** An annotated tag of `commit`, signed when asked; returns the tag object's id. */
    tag(name: string, commit: string, signing?: Signing): string {
      git(
        [
          'tag',
          '--force',
          ...(signing === undefined ? ['-a'] : ['-s']),
          '-m',
          `release ${name}`,
          name,
          commit,
        ],
        signing,
      );
      return git(['rev-parse', `refs/tags/${name}`]);
    },
    /** A copy of signed `commit` with its message changed, signature kept: what tampering looks like. */
    tampered(commit: string): string {
      const object = git(['cat-file', 'commit', commit]).replace(/\nupdate$/, '\nupdated, quietly');
      return execFileSync('git', ['-C', dir, 'hash-object', '-t', 'commit', '-w', '--stdin'], {
        env: gitEnv(),
        input: `${object}\n`,
        encoding: 'utf8',
      }).trim();
    },
    /** Points `main` at `commit`. */
    moveMain(commit: string): void {
      git(['update-ref', 'refs/heads/main', commit]);
    },
  };
}

export const skill = (name: string, body = 'Body.') =>
  `---\nname: ${name}\ndescription: The ${name} skill, for signature tests.\n---\n${body}\n`;
