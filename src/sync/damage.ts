import { blobId, GitError, type Repository } from '../git/index.ts';
import { type CommitIndex, digestOf, servedBlobs } from '../index/index.ts';

/** A served commit its store cannot serve as indexed: what is wrong, and so what repairs it. */
export interface Damage {
  commit: string;
  /** `objects`: the store lacks (or holds corrupt) objects of the commit, re-fetched; `index`: the index file names
   * sizes or digests the store's objects do not have, rebuilt from them. */
  kind: 'objects' | 'index';
  /** A sentence of ours for clients and status: no path, no remote text. */
  detail: string;
  /** What failed, for the log only. */
  log?: string;
}

export function damageOf(commit: string, kind: Damage['kind'], log?: string): Damage {
  const detail =
    kind === 'objects'
      ? `objects of commit ${commit} are missing from the store or unreadable; fetching them again`
      : `the index file of commit ${commit} does not match the store; rebuilding it`;
  return { commit, kind, detail, log };
}

type Indexed = { commit: string; skills: readonly CommitIndex['skills'][number][] };

/** The blobs of a commit its store lacks (the commit itself included): damage when there are any. */
export async function checkStore(repo: Repository, index: Indexed): Promise<Damage | undefined> {
  const blobs = servedBlobs(index);
  // What the store holds now, not what was remembered of it (a pack may be gone since).
  repo.refresh();
  const missing = await repo.missingObjects([index.commit, ...blobs]);
  if (missing.length === 0) return undefined;
  return damageOf(index.commit, 'objects', `${missing.length} object(s) missing, such as ${missing[0]}`);
}

/**
 * The objects of a commit that the reader serving its reads does not find (the commit itself included), asked of
 * that reader, not of the disk: a repair is good only when reads are. Damage when there are any.
 */
export async function checkReads(repo: Repository, index: Indexed): Promise<Damage | undefined> {
  const oids = [index.commit, ...servedBlobs(index)];
  const sizes = await repo.objectSizes(oids);
  const unread = oids.filter((_, i) => sizes[i] === undefined);
  if (unread.length === 0) return undefined;
  return damageOf(index.commit, 'objects', `${unread.length} object(s) unreadable, such as ${unread[0]}`);
}

/**
 * The read function a namespace gets: each blob checked against the size and digest its index publishes, and
 * damage told to `report` (once per namespace) when a blob is missing or its bytes are not what the index says.
 * git names a blob by the SHA-1 of its bytes, so bytes that hash to their id are right and the index is wrong;
 * other bytes are a corrupt store. `firstCheck`, when given, runs at the first read without holding it up: a
 * namespace restored from its index file has not looked at the store yet.
 */
export function guardedReader(
  index: CommitIndex,
  read: (blob: string) => Promise<Uint8Array>,
  report: (damage: Damage) => void,
  firstCheck?: () => Promise<Damage | undefined>,
): (blob: string) => Promise<Uint8Array> {
  let expected: Map<string, { size: number; digest: string }> | undefined;
  let checked = firstCheck === undefined;
  let reported = false;
  const damaged = (damage: Damage) => {
    if (reported) return;
    reported = true;
    report(damage);
  };
  return async (blob) => {
    if (!checked) {
      checked = true;
      void firstCheck!().then(
        (damage) => damage !== undefined && damaged(damage),
        () => undefined,
      );
    }
    let bytes: Uint8Array;
    try {
      bytes = await read(blob);
    } catch (error) {
      if (error instanceof GitError && error.code === 'source-incomplete')
        damaged(damageOf(index.commit, 'objects', `blob ${blob}: ${error.log ?? error.message}`));
      throw error;
    }
    expected ??= new Map(
      index.skills.flatMap((skill) => skill.files.map((file) => [file.blob, file] as const)),
    );
    const want = expected.get(blob);
    if (want !== undefined && (bytes.byteLength !== want.size || digestOf(bytes) !== want.digest)) {
      const damage = damageOf(index.commit, blobId(bytes) === blob ? 'index' : 'objects', `blob ${blob}`);
      damaged(damage);
      throw new GitError('source-store-damaged', damage.detail);
    }
    return bytes;
  };
}

/** A reported damage and when it was reported. */
export type DamageSeen = Damage & { at: string };

/** Damage that reads or checks found in served commits, per source, until a sync repairs it. */
export interface DamageLedger {
  /** Records `damage` of source `id`; false when that commit's damage is already known. */
  report(id: string, damage: Damage, at: string): boolean;
  of(id: string): readonly DamageSeen[];
  /** What status and the catalog show of a damaged source: its first damage, met before anything else. */
  error(id: string): { reason: 'source-store-damaged'; detail: string; at: string } | undefined;
  /** Forgets the damage of the commits a sync repaired (damage reported while it ran, of others, stays). */
  repaired(id: string, commits: readonly string[]): void;
}

export function createDamageLedger(): DamageLedger {
  let damaged: ReadonlyMap<string, readonly DamageSeen[]> = new Map();
  return {
    report(id, damage, at) {
      const known = damaged.get(id) ?? [];
      if (known.some((d) => d.commit === damage.commit)) return false;
      damaged = new Map(damaged).set(id, [...known, { ...damage, at }]);
      return true;
    },
    of: (id) => damaged.get(id) ?? [],
    error(id) {
      const first = damaged.get(id)?.[0];
      return first === undefined
        ? undefined
        : { reason: 'source-store-damaged', detail: first.detail, at: first.at };
    },
    repaired(id, commits) {
      if (commits.length === 0) return;
      const left = (damaged.get(id) ?? []).filter((d) => !commits.includes(d.commit));
      const next = new Map(damaged);
      if (left.length === 0) next.delete(id);
      else next.set(id, left);
      damaged = next;
    },
  };
}
