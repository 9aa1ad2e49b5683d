import { createHash } from 'node:crypto';
import type { Signer } from '../shared/signer.ts';
import type { IndexedSkill } from './types.ts';

/**
 * A skill's aggregate digest: `sha256:` and the hex SHA-256 of its canonical manifest, one line per served file
 * (nested skills' files included) as `<digest> <size> <path>\n` (the file's `sha256:` digest, its size in
 * decimal, its path below the skill folder), sorted by the paths' UTF-8 bytes. Equal digests: equal files.
 */
export function skillDigest(skill: IndexedSkill): string {
  return `sha256:${skillDigestBytes(skill).toString('hex')}`;
}

/** The 32 bytes of `skillDigest`'s SHA-256. */
export function skillDigestBytes(skill: IndexedSkill): Buffer {
  const files = skill.files
    .map((file) => ({ file, key: Buffer.from(file.relPath) }))
    .sort((a, b) => Buffer.compare(a.key, b.key));
  const hash = createHash('sha256');
  for (const { file } of files) hash.update(`${file.digest} ${file.size} ${file.relPath}\n`);
  return hash.digest();
}

/** The provenance keys of a verified signer: who (principal or key fingerprint) and how (`ssh`, `openpgp`). */
export function signerMeta(prefix: string, signer: Signer | undefined): Record<string, string> {
  if (signer === undefined) return {};
  return { [`${prefix}signer`]: signer.identity, [`${prefix}signatureType`]: signer.type };
}
