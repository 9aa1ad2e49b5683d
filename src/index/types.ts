import type { SkillProblem } from '../shared/reasons.ts';
import type { Signer } from '../shared/signer.ts';
import type { Declaration, Frontmatter, SizedFile } from '../skills/index.ts';

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
  /** The path it is served under: `dir` with its last segment replaced by `name` (they differ in real
   * repositories; the URI's last segment must be the name), its real path kept in provenance. */
  servedDir: string;
  frontmatter: Frontmatter;
  /** Every file, nested skills' included, sorted by `relPath`. */
  files: IndexedFile[];
  bytes: number;
  /** Its accepted `mcp-host:` block (scripts that are files of the skill); absent when it has none. */
  declaration?: Declaration;
}

/**
 * The index file format; a file of another version is rebuilt from git. 2 added skills' declarations; 3 refuses
 * a skill with a file whose URI passes MAX_URI_BYTES (`uri-too-long`), which a version 2 file may still list; 4
 * follows symlinks to skills in the tree (`skill-alias`, info), which a version 3 file refuses or leaves out.
 */
export const INDEX_VERSION = 4;

/** What one commit serves, as persisted: plain JSON. */
export interface CommitIndex {
  version: typeof INDEX_VERSION;
  commit: string;
  commitTime: string;
  /** The commit's root tree id. */
  tree: string;
  /** Who signed the commit (or its tag), when the source verifies signatures; set by the sync layer. */
  signer?: Signer;
  skills: IndexedSkill[];
  problems: SkillProblem[];
}
