/** Who signed a served commit, as verified against the source's configured keys. Plain data: persisted. */
export interface Signer {
  /** `ssh` (SSHSIG, git's `gpg.format=ssh`) or `openpgp`. */
  type: 'ssh' | 'openpgp';
  /** The allowed_signers principal (SSH), or the primary key's fingerprint (OpenPGP, 40 uppercase hex). */
  identity: string;
  /** The signing key: `SHA256:…` as `ssh-keygen -l` prints it, or the signing (sub)key's fingerprint. */
  key: string;
  /** What the signature covers: the commit itself, or an annotated tag pointing at it. */
  object: 'commit' | 'tag';
  /** The annotated tag object's id, when `object` is `tag`. */
  tag?: string;
}
