import { createHash } from 'node:crypto';
import type { PublicKey } from 'openpgp';
import { ConfigError } from '../../config/error.ts';
import type { VerifyConfig } from '../../config/types.ts';
import { messageOf } from '../../shared/text.ts';
import { type AllowedSigner, AllowedSignersError, parseAllowedSigners } from './allowedSigners.ts';
import { readPublicKeys } from './openpgp.ts';

/** A source's `verify:` with its keys parsed. */
export interface Keyring {
  require: VerifyConfig['require'];
  /** The allowed signers, when `sshAllowedSigners` is configured. */
  ssh?: readonly AllowedSigner[];
  /** Every key of every `gpgKeys` file, when configured. */
  openpgp?: readonly PublicKey[];
  /** sha256 over the rule and every key file's bytes: what was verified under other keys is verified again. */
  fingerprint: string;
}

const parsed = new WeakMap<VerifyConfig, Promise<Keyring>>();

async function parse(verify: VerifyConfig): Promise<Keyring> {
  const hash = createHash('sha256').update(`require ${verify.require}\n`);
  let ssh: AllowedSigner[] | undefined;
  if (verify.sshAllowedSigners !== undefined) {
    const { label, text } = verify.sshAllowedSigners;
    hash.update(`ssh ${text.length}\n${text}`);
    try {
      ssh = parseAllowedSigners(text);
    } catch (error) {
      if (error instanceof AllowedSignersError) throw new ConfigError(`${label}: ${error.message}`);
      throw error;
    }
  }
  let openpgp: PublicKey[] | undefined;
  if (verify.gpgKeys.length > 0) {
    openpgp = [];
    for (const { label, text } of verify.gpgKeys) {
      hash.update(`openpgp ${text.length}\n${text}`);
      try {
        openpgp.push(...(await readPublicKeys(text)));
      } catch (error) {
        throw new ConfigError(`${label}: not an armored OpenPGP public key (${messageOf(error)})`);
      }
    }
  }
  return {
    require: verify.require,
    ssh,
    openpgp,
    fingerprint: `sha256:${hash.digest('hex')}`,
  };
}

/** The parsed keys of a `verify:` section, once per section; a key file that cannot be used is a ConfigError. */
export function keyringOf(verify: VerifyConfig): Promise<Keyring> {
  let found = parsed.get(verify);
  if (found === undefined) parsed.set(verify, (found = parse(verify)));
  return found;
}
