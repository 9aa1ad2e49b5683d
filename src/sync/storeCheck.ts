import type { Repository } from '../git/index.ts';
import { type CommitIndex, servedBlobs } from '../index/index.ts';
import { type Damage, damageOf } from './damage.ts';

/** The blobs of a commit its store lacks (the commit itself included): damage when there are any. */
export async function checkStore(
  repo: Repository,
  index: { commit: string; skills: readonly CommitIndex['skills'][number][] },
): Promise<Damage | undefined> {
  const blobs = servedBlobs(index);
  // What the store holds now, not what was remembered of it (a pack may be gone since).
  repo.refresh();
  const missing = await repo.missingObjects([index.commit, ...blobs]);
  if (missing.length === 0) return undefined;
  return damageOf(index.commit, 'objects', `${missing.length} object(s) missing, such as ${missing[0]}`);
}
