import type { Signer } from '../../shared/signer.ts';
import { GitError } from '../errors.ts';
import { parseCommit, parseTag } from '../objects.ts';
import type { ResolvedRef } from '../refs.ts';
import type { Repository } from '../repository.ts';
import { readObject } from '../tree.ts';
import { matchesPatternList } from './allowedSigners.ts';
import type { Keyring } from './keyring.ts';
import { verifyOpenPgp } from './openpgp.ts';
import { commitSignature, type SignedPayload, tagSignature } from './payload.ts';
import { parseSshSignature, sshFingerprint, verifySshSignature } from './sshsig.ts';

/** The namespace git signs and verifies SSH signatures in (`ssh-keygen -Y sign -n git`). */
export const GIT_NAMESPACE = 'git';

/**
 * As `ssh-keygen -Y find-principals` then `-Y verify -n git` do for git: the signature proves its bytes, then the
 * first allowed_signers line holding its key that allows the `git` namespace at the object's own time (git passes
 * the committer or tagger time as `verify-time`) names the signer.
 */
function verifySsh(signed: SignedPayload, keyring: Keyring, time: number): Pick<Signer, 'identity' | 'key'> {
  const signature = parseSshSignature(signed.signature);
  verifySshSignature(signature, signed.payload, GIT_NAMESPACE);
  const key = sshFingerprint(signature.publicKey);
  const lines = (keyring.ssh ?? []).filter(
    (line) => !line.certAuthority && line.publicKey.equals(signature.publicKey),
  );
  if (lines.length === 0)
    throw new GitError(
      'source-signer-unknown',
      `signed by SSH key ${key}, which is not in sshAllowedSigners`,
    );
  const inNamespace = lines.filter(
    (line) => line.namespaces === undefined || matchesPatternList(GIT_NAMESPACE, line.namespaces),
  );
  if (inNamespace.length === 0)
    throw new GitError(
      'source-signer-not-allowed',
      `SSH key ${key} (${lines[0]!.principals}) is not allowed to sign in the "git" namespace`,
    );
  const timely = inNamespace.find(
    (line) =>
      (line.validAfter === undefined || time >= line.validAfter) &&
      (line.validBefore === undefined || time <= line.validBefore),
  );
  if (timely === undefined)
    throw new GitError(
      'source-signer-expired',
      `SSH key ${key} (${inNamespace[0]!.principals}) is not valid at ${new Date(time).toISOString()} (valid-after/valid-before)`,
    );
  return { identity: timely.principals, key };
}

async function verifySigned(
  signed: SignedPayload,
  keyring: Keyring,
  time: number,
  now: Date,
): Promise<Pick<Signer, 'type' | 'identity' | 'key'>> {
  const armor = signed.signature.trimStart();
  if (armor.startsWith('-----BEGIN SSH SIGNATURE-----')) {
    if (keyring.ssh === undefined)
      throw new GitError(
        'source-signer-unknown',
        'signed with an SSH key, and no sshAllowedSigners is configured',
      );
    return { type: 'ssh', ...verifySsh(signed, keyring, time) };
  }
  if (armor.startsWith('-----BEGIN PGP SIGNATURE-----')) {
    if (keyring.openpgp === undefined)
      throw new GitError(
        'source-signer-unknown',
        'signed with an OpenPGP key, and no gpgKeys are configured',
      );
    return { type: 'openpgp', ...(await verifyOpenPgp(signed, keyring.openpgp, now)) };
  }
  throw new GitError(
    'source-signature-invalid',
    'the signature is neither an SSH nor an OpenPGP signature (X.509 signatures are not supported)',
  );
}

async function objectOf(repo: Repository, oid: string, type: 'commit' | 'tag'): Promise<Buffer> {
  const found = await readObject(repo, oid);
  if (found?.type !== type)
    throw new GitError(
      type === 'commit' ? 'source-commit-not-found' : 'source-incomplete',
      `${type} ${oid} is not in the repository`,
    );
  return found.data;
}

/** The name a tag reached through `ref` must carry: a tag ref's short name, else the ref as it is named. */
const tagNameOf = (ref: string) => (ref.startsWith('refs/tags/') ? ref.slice('refs/tags/'.length) : ref);

/**
 * A signed tag vouches for its own name only: one signed as `v1` found under `refs/tags/release` is an old
 * release served under a new name, whoever moved the ref.
 */
function boundToRef(name: string | undefined, target: ResolvedRef): void {
  if (target.ref === undefined)
    throw new GitError(
      'source-signature-invalid',
      `tag ${target.tag} was reached through no known ref, so its name cannot be checked`,
    );
  if (name !== tagNameOf(target.ref))
    throw new GitError(
      'source-signature-invalid',
      `tag ${target.tag} is signed as ${JSON.stringify(name ?? '')}, and was reached through ${target.ref}: a signed tag serves only under its own name`,
    );
}

/**
 * Verifies the signature a source's `verify:` requires of `target`: the commit's own (`require: commit`), or
 * that of the annotated tag the ref names, which must point at the commit and carry the ref's name (`require: tag`). Returns who signed;
 * throws a GitError with the reason (unsigned, invalid, unknown, not allowed, expired) otherwise.
 */
export async function verifyTarget(
  repo: Repository,
  target: ResolvedRef,
  keyring: Keyring,
  now: Date = new Date(),
): Promise<Signer> {
  if (keyring.require === 'tag') {
    if (target.tag === undefined)
      throw new GitError('source-unsigned', 'verify.require is tag, and the ref names no annotated tag');
    const data = await objectOf(repo, target.tag, 'tag');
    const tag = parseTag(data, target.tag);
    if (tag.type !== 'commit' || tag.object !== target.commit)
      throw new GitError(
        'source-unsigned',
        `tag ${tag.tag ?? target.tag} does not point at commit ${target.commit}`,
      );
    const signed = tagSignature(data);
    if (signed === undefined)
      throw new GitError('source-unsigned', `tag ${tag.tag ?? target.tag} is not signed`);
    const signer = await verifySigned(signed, keyring, (tag.taggerTime ?? 0) * 1000, now);
    boundToRef(tag.tag, target);
    return { ...signer, object: 'tag', tag: target.tag };
  }
  const data = await objectOf(repo, target.commit, 'commit');
  const signed = commitSignature(data);
  if (signed === undefined) throw new GitError('source-unsigned', `commit ${target.commit} is not signed`);
  const signer = await verifySigned(
    signed,
    keyring,
    parseCommit(data, target.commit).committerTime * 1000,
    now,
  );
  return { ...signer, object: 'commit' };
}
