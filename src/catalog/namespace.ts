import path from 'node:path';
import type { SourceConfig } from '../config/index.ts';
import { redactUrl } from '../git/index.ts';
import type { CommitIndex, IndexedFile, IndexedSkill } from '../index/index.ts';
import type { SearchData } from '../index/searchBuild.ts';
import type { SkillProblem } from '../shared/reasons.ts';
import type { Signer } from '../shared/signer.ts';

/** Where a namespace's bytes came from, for provenance: never holds credentials. */
export interface Origin {
  /** Repository URL without credentials, or `local:<name>` for a local repository. */
  repository: string;
  /** The ref of a `refs:` source this namespace serves (a full name: `refs/tags/v2.1.0`). */
  ref?: string;
}

/** Where a source's bytes come from, for provenance and status: never a credential. */
export function sourceOrigin(source: SourceConfig): Origin {
  return {
    repository:
      source.location.kind === 'remote'
        ? redactUrl(source.location.url)
        : `local:${source.location.given ?? path.basename(source.location.path)}`,
    ref: source.group?.ref,
  };
}

/** One repo@commit as served: what it serves, what it reports, and where its bytes come from. */
export interface Namespace {
  readonly source: string;
  readonly commit: string;
  /** ISO 8601, from the commit. */
  readonly commitTime: string;
  readonly origin: Origin;
  /** Every served skill, in the index's order. */
  readonly skills: readonly IndexedSkill[];
  /** Skills and files of this commit that are not served, and warnings. */
  readonly problems: readonly SkillProblem[];
  /** Who signed the commit (or its tag), when the source verifies signatures. */
  readonly signer?: Signer;
  /**
   * A blob's bytes, checked against the size and digest the index publishes (sync's guarded reader: a blob that
   * differs throws source-store-damaged); readers above do not hash them again.
   */
  readBlob(blob: string): Promise<Uint8Array>;
  /**
   * The text after the frontmatter of a SKILL.md blob, as the indexer read it from the bytes it hashed, while it
   * is still held (sync keeps what it read of a source's served SKILL.md files); undefined when it is not: read
   * the blob then. Saves the search index a second read of every SKILL.md when a commit is published.
   */
  skillMdBody?(blob: string): string | undefined;
  /**
   * The search index of `skills` (ids: positions in it), as saved with the commit's index, or built once and saved
   * (sync's); absent where nothing persists it (the MCP layer builds it then).
   */
  searchData?(): Promise<SearchData>;
}

export function buildNamespace(
  source: string,
  index: CommitIndex,
  origin: Origin,
  readBlob: (blob: string) => Promise<Uint8Array>,
  skillMdBody?: (blob: string) => string | undefined,
  searchData?: () => Promise<SearchData>,
): Namespace {
  return {
    source,
    commit: index.commit,
    commitTime: index.commitTime,
    origin,
    skills: index.skills,
    problems: index.problems,
    signer: index.signer,
    readBlob,
    skillMdBody,
    searchData,
  };
}

/** One file of a served skill: its URI and what the index knows of it (blob, digest, size, path). */
export interface CatalogFile {
  readonly uri: string;
  readonly file: IndexedFile;
}

/**
 * A served skill as the layers above the catalog share it (mcp serves it, run materialises it): its namespace,
 * its indexed skill, the URI of its SKILL.md, and its files (nested skills' included) by path relative to its
 * folder.
 */
export interface CatalogSkill {
  readonly ns: Namespace;
  readonly skill: IndexedSkill;
  readonly uri: string;
  readonly files: ReadonlyMap<string, CatalogFile>;
}

/** Reads a served file, checked against its digest; every read (resources, tools, prompts, skill_run) is one. */
export type FileReader = (ns: Namespace, file: CatalogFile) => Promise<Uint8Array>;
