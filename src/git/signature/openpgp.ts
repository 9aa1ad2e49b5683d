import type { PublicKey } from 'openpgp';
import { messageOf } from '../../shared/text.ts';
import { GitError } from '../errors.ts';
import type { SignedPayload } from './payload.ts';

/** openpgp is loaded only by sources that configure gpgKeys. */
export const openpgpLibrary = () => import('openpgp');

/** Reads armored public keys (one file may hold several); throws with the library's reason. */
export async function readPublicKeys(armored: string): Promise<PublicKey[]> {
  const { readKeys } = await openpgpLibrary();
  const keys = await readKeys({ armoredKeys: armored });
  if (keys.some((key) => key.isPrivate())) throw new Error('it holds a private key; give the public key');
  return keys;
}

/**
 * Verifies an OpenPGP detached signature over `signed.payload` with one of `keys`. As git with gpg does, a key
 * that has expired or been revoked by `now` fails (gpg's EXPKEYSIG / REVKEYSIG), even for an older signature.
 */
export async function verifyOpenPgp(
  signed: SignedPayload,
  keys: readonly PublicKey[],
  now: Date,
): Promise<{ identity: string; key: string }> {
  const openpgp = await openpgpLibrary();
  let signature: Awaited<ReturnType<typeof openpgp.readSignature>>;
  try {
    signature = await openpgp.readSignature({ armoredSignature: signed.signature });
  } catch (error) {
    throw new GitError(
      'source-signature-invalid',
      `the OpenPGP signature cannot be read: ${messageOf(error)}`,
    );
  }
  const issuers = signature.getSigningKeyIDs();
  const key = keys.find((candidate) => issuers.some((id) => candidate.getKeys(id).length > 0));
  if (key === undefined)
    throw new GitError(
      'source-signer-unknown',
      `signed by OpenPGP key ${issuers.map((id) => id.toHex().toUpperCase()).join(', ')}, which is not among gpgKeys`,
    );
  const message = await openpgp.createMessage({ binary: signed.payload });
  const { signatures } = await openpgp.verify({
    message,
    signature,
    verificationKeys: [key],
    format: 'binary',
  });
  const result = signatures.find((candidate) => key.getKeys(candidate.keyID).length > 0)!;
  try {
    await result.verified;
  } catch (error) {
    throw new GitError(
      'source-signature-invalid',
      `the OpenPGP signature does not verify: ${messageOf(error)}`,
    );
  }
  const identity = key.getFingerprint().toUpperCase();
  if (await key.isRevoked(undefined, undefined, now))
    throw new GitError('source-signer-expired', `OpenPGP key ${identity} has been revoked`);
  let signingKey: Awaited<ReturnType<PublicKey['getSigningKey']>>;
  try {
    signingKey = await key.getSigningKey(result.keyID, now);
  } catch {
    const expires = await key.getExpirationTime().catch(() => null);
    const when = expires instanceof Date ? ` on ${expires.toISOString()}` : '';
    throw new GitError(
      'source-signer-expired',
      `OpenPGP key ${identity} is no longer valid (expired${when})`,
    );
  }
  return { identity, key: signingKey.getFingerprint().toUpperCase() };
}
