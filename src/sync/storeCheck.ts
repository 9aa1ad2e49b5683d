import type { Repository } from '../git/index.ts';
import { type CommitIndex, servedBlobs } from '../index/index.ts';
import { type Damage, damageOf } from './damage.ts';

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
