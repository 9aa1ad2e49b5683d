import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument, stringify } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../config/error.ts';
import type { Config, SourceConfig } from '../config/types.ts';
import { type CommitIndex, type SkillSummary, summaryOf } from '../index/index.ts';
import { COMMIT_PATTERN } from '../shared/patterns.ts';
import type { Signer } from '../shared/signer.ts';
import { compareText } from '../shared/text.ts';
import { isRefsSource, refSourceConfig } from '../sync/refGroup.ts';
import { sourceOrigin } from '../catalog/index.ts';

/** The lockfile's name next to the config, unless `lock:` names another. */
export const LOCKFILE_NAME = 'skillpin.lock';

/** One source as locked: exactly what `serve --locked` serves, and what a reviewer compares. */
export interface LockedSource {
  id: string;
  /** URL without credentials, or `local:<folder>`: as provenance names it. */
  repository: string;
  /** The ref the commit was resolved from; absent for a source that pins a commit. */
  ref?: string;
  /** A ref of a `refs:` source: that source's id (the entry's `id` is the ref's, `<group>.<ref>`). */
  group?: string;
  commit: string;
  commitTime: string;
  /** The commit's root tree id. */
  tree: string;
  /** Who signed, when the source verifies signatures. */
  signer?: Signer;
  /** Every served skill, by path. */
  skills: SkillSummary[];
}

/** `skillpin.lock`, version 1: fields are only ever added. */
export interface Lockfile {
  version: 1;
  sources: LockedSource[];
}

/** Where a lockfile's reader learns what a skill's digest is (test/docs.test.ts holds the heading to it). */
export const DIGEST_PAGE =
  'https://github.com/skillpin/skillpin/blob/main/docs/following-and-pins.md#aggregate-digest';

const HEADER = `# The exact commits \`skillpin serve --locked\` serves. Written by \`skillpin lock\` and \`skillpin update\`;
# commit it and review its changes like code. A skill's digest is the SHA-256 of its files, as
# ${DIGEST_PAGE} explains.
`;

const hex40 = z.string().regex(COMMIT_PATTERN);
const lockfileSchema = z.object({
  version: z.literal(1),
  sources: z.array(
    z.object({
      id: z.string().min(1),
      repository: z.string().min(1),
      ref: z.string().min(1).optional(),
      group: z.string().min(1).optional(),
      commit: hex40,
      commitTime: z.string(),
      tree: hex40,
      signer: z
        .object({
          type: z.enum(['ssh', 'openpgp']),
          identity: z.string(),
          key: z.string(),
          object: z.enum(['commit', 'tag']),
          tag: hex40.optional(),
        })
        .optional(),
      skills: z.array(
        z.object({
          path: z.string(),
          name: z.string(),
          files: z.number().int().nonnegative(),
          bytes: z.number().int().nonnegative(),
          digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
        }),
      ),
    }),
  ),
});

/** Where the lockfile of `config` is: `lock:`, else `skillpin.lock` next to the config file. */
export function lockfilePath(config: Config): string {
  return config.lock ?? path.join(path.dirname(config.file), LOCKFILE_NAME);
}

/**
 * The lock entry of a source serving `index`. Keys in a fixed order, skills by path: the file diffs cleanly (YAML
 * leaves out a key whose value is undefined).
 */
export function lockedSourceOf(source: SourceConfig, index: CommitIndex): LockedSource {
  const signer = index.signer;
  return {
    id: source.id,
    repository: sourceOrigin(source).repository,
    ref: source.target.kind === 'ref' ? source.target.ref : undefined,
    group: source.group?.id,
    commit: index.commit,
    commitTime: index.commitTime,
    tree: index.tree,
    signer: signer && {
      type: signer.type,
      identity: signer.identity,
      key: signer.key,
      object: signer.object,
      tag: signer.tag,
    },
    skills: index.skills.map(summaryOf).sort((a, b) => compareText(a.path, b.path)),
  };
}

export function renderLockfile(lock: Lockfile): string {
  return HEADER + stringify(lock, { lineWidth: 0 });
}

/** Reads a lockfile; one that is missing or malformed is a ConfigError naming it. */
export function readLockfile(file: string): Lockfile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(
      code === 'ENOENT'
        ? `${file}: no lockfile; write one with skillpin lock`
        : `${file}: cannot be read (${code ?? 'error'})`,
    );
  }
  const doc = parseDocument(text, { version: '1.2', schema: 'core', uniqueKeys: true, prettyErrors: false });
  if (doc.errors[0] !== undefined)
    throw new ConfigError(`${file}: not valid YAML: ${doc.errors[0].message.split('\n', 1)[0]}`);
  const parsed = lockfileSchema.safeParse(doc.toJS());
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`${file}: ${issue.path.join('.') || '(top level)'}: ${issue.message}`);
  }
  return parsed.data as Lockfile;
}

/** Why a lock entry no longer describes a configured source (then it is resolved again), or `undefined`. */
export function lockMismatch(source: SourceConfig, entry: LockedSource | undefined): string | undefined {
  if (entry === undefined) return 'has no entry for it';
  const repository = sourceOrigin(source).repository;
  if (entry.repository !== repository)
    return `pins it at ${entry.repository}, and the config names ${repository}`;
  const { target } = source;
  if (target.kind === 'ref' && entry.ref !== target.ref)
    return `locked it ${entry.ref === undefined ? 'as a pinned commit' : `following ref ${entry.ref}`}, and the config follows ${target.ref}`;
  if (target.kind === 'commit' && (entry.ref !== undefined || entry.commit !== target.commit))
    return `pins commit ${entry.commit}, and the config pins ${target.commit}`;
  if (source.verify?.require === 'tag' && entry.signer?.tag === undefined)
    return 'holds no verified tag for it, and the config requires a signed tag';
  return undefined;
}

/**
 * `config` serving exactly the commits of `lock`: every source pinned to its locked commit (and verified tag),
 * following no ref, retaining none, and refusing a commit that does not serve what its entry lists. A lockfile that does not match the config (a source missing, extra, or with another
 * repository or ref) is a ConfigError naming the first such source.
 */
export function lockedConfig(config: Config, lock: Lockfile, file: string): Config {
  const entries = new Map(lock.sources.map((entry) => [entry.id, entry]));
  const configured = new Set(config.sources.map((source) => source.id));
  const groups = new Set(config.sources.filter(isRefsSource).map((source) => source.id));
  const extra = lock.sources.find((entry) =>
    entry.group === undefined ? !configured.has(entry.id) : !groups.has(entry.group),
  );
  if (extra !== undefined)
    throw new ConfigError(
      `${file}: pins source "${extra.id}", which the config does not have; run skillpin lock`,
    );
  // A `refs:` source serves exactly the refs locked for it, each pinned like a source of its own.
  const expanded = config.sources.flatMap((source) => {
    if (!isRefsSource(source)) return [source];
    const refs = lock.sources.filter((entry) => entry.group === source.id);
    if (refs.length === 0)
      throw new ConfigError(
        `${file}: source "${source.id}": the lockfile pins none of its refs; run skillpin update ${source.id}`,
      );
    return refs.map((entry) =>
      refSourceConfig(source, { name: entry.ref ?? '', id: entry.id, commit: entry.commit }),
    );
  });
  const sources = expanded.map((source): SourceConfig => {
    const entry = entries.get(source.id);
    const mismatch = lockMismatch(source, entry);
    if (mismatch !== undefined)
      throw new ConfigError(
        `${file}: source "${source.id}": the lockfile ${mismatch}; run skillpin update ${source.id}`,
      );
    const { pollMs: _follows, ...pinned } = source;
    const tag = source.verify?.require === 'tag' ? entry!.signer?.tag : undefined;
    const lock = { tree: entry!.tree, skills: entry!.skills };
    // Exactly the locked commit serves: nothing retained from before (a rolled-back lock serves no newer commit).
    return {
      ...pinned,
      keep: 0,
      target: {
        kind: 'commit',
        commit: entry!.commit,
        tag,
        ref: tag === undefined ? undefined : entry!.ref,
        lock,
      },
    };
  });
  return { ...config, sources };
}
