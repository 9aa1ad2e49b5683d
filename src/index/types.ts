import type { SkillProblem } from '../shared/reasons.ts';
import type { Signer } from '../shared/signer.ts';
import type { Frontmatter, SizedFile } from '../skills/index.ts';

/** Size and `sha256:` digest of one blob's raw bytes. Same blob id, same facts: cached by id. */
export interface BlobFacts {
  size: number;
  digest: string;
  /** The blob is a Git LFS pointer. */
  lfs?: true;
}

/** A served file with its blob's digest: what the manifest publishes. Persisted without the LFS flag. */
export interface IndexedFile extends SizedFile {
  digest: string;
}

export interface IndexedSkill {
  name: string;
  /** The skill's folder in the repository ('' for the root). */
  dir: string;
  /** The path it is served under: `dir` with its last segment replaced by `name` (see DESIGN.md). */
  servedDir: string;
  frontmatter: Frontmatter;
  /** Every file, nested skills' included, sorted by `relPath`. */
  files: IndexedFile[];
  bytes: number;
}

/** What one commit serves, as persisted: plain JSON. */
export interface CommitIndex {
  version: 1;
  commit: string;
  commitTime: string;
  /** The commit's root tree id. */
  tree: string;
  /** Who signed the commit (or its tag), when the source verifies signatures; set by the sync layer. */
  signer?: Signer;
  skills: IndexedSkill[];
  problems: SkillProblem[];
}
