import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseShorthand, shorthandUrl, webFolder } from '../config/shorthand.ts';
import type { KeyFile, SourceConfig, VerifyConfig } from '../config/types.ts';
import { expandCommit, openLocalRepository } from '../git/index.ts';
import { COMMIT_PATTERN } from '../shared/patterns.ts';

/** A command line that cannot be acted on: exit `usage` with its message. */
export class UsageError extends Error {}

/** A commit id a user types: 4 to 40 hex digits. */
export const COMMIT_ID = /^[0-9a-f]{4,40}$/;

/** Verification options as `check` and `diff` take them. */
export interface VerifyOptions {
  sshAllowedSigners?: string;
  gpgKey?: string[];
  requireSigned?: 'commit' | 'tag';
}

/**
 * Where a repository argument points: a local folder, an http(s) URL, or `github:owner/repo` /
 * `gitlab:group/project`. The web page of a folder (`…/tree/<ref>/<path>`) is refused with the equivalent.
 */
export function locationOf(target: string, tokenEnv?: string): SourceConfig['location'] {
  const short = parseShorthand(target);
  if (/^(github|gitlab):/.test(target) && short === undefined)
    throw new UsageError(`${target}: expected github:owner/repo or gitlab:group/project`);
  const url = short === undefined ? target : shorthandUrl(short.kind, short.name);
  if (!/^https?:\/\//.test(url)) return { kind: 'local', path: path.resolve(target), given: target };
  const page = webFolder(url);
  if (page !== undefined)
    throw new UsageError(
      `${url} is the web page of a folder, not a repository (where its ref ends and its path begins is ambiguous); ` +
        `give ${page.repository.replace(/^(github|gitlab): /, '$1:').replace(/^url: /, '')} --ref ${page.ref}` +
        (page.path === undefined ? '' : ` --paths ${page.path}`),
    );
  let token: string | undefined;
  if (tokenEnv !== undefined) {
    token = process.env[tokenEnv];
    if (token === undefined || token === '')
      throw new UsageError(`environment variable ${tokenEnv} is not set`);
  }
  return { kind: 'remote', url, token };
}

function keyFile(option: string, file: string): KeyFile {
  const label = `${option} (${file})`;
  try {
    return { label, text: readFileSync(file, 'utf8') };
  } catch (error) {
    throw new UsageError(`${label}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** The `verify:` the options ask for; `undefined` when they name no key. */
export function verifyOf(options: VerifyOptions): VerifyConfig | undefined {
  const gpgKeys = (options.gpgKey ?? []).map((file) => keyFile('--gpg-key', file));
  if (options.sshAllowedSigners === undefined && gpgKeys.length === 0) {
    if (options.requireSigned !== undefined)
      throw new UsageError(
        '--require-signed needs the keys to verify with: --ssh-allowed-signers or --gpg-key',
      );
    return undefined;
  }
  return {
    require: options.requireSigned ?? 'commit',
    sshAllowedSigners:
      options.sshAllowedSigners === undefined
        ? undefined
        : keyFile('--ssh-allowed-signers', options.sshAllowedSigners),
    gpgKeys,
  };
}

/** A full commit id for `commit`: as given when it is full, else the one commit a local repository has for it. */
export async function fullCommit(location: SourceConfig['location'], commit: string): Promise<string> {
  if (COMMIT_PATTERN.test(commit)) return commit;
  if (location.kind === 'remote')
    throw new UsageError(`${commit}: a short commit id needs a local repository; give all 40 hex digits`);
  const repo = await openLocalRepository(location.path);
  try {
    return await expandCommit(repo, commit);
  } finally {
    await repo.close();
  }
}
