import type { LockedIndex } from '../config/index.ts';
import { GitError } from '../git/index.ts';
import { type CommitIndex, summaryOf } from '../index/index.ts';

type Summary = LockedIndex['skills'][number];
const FIELDS = ['name', 'files', 'bytes', 'digest'] as const;

/** Every way `index` differs from what its lock entry lists, each naming the field and both values. */
export function lockDifferences(lock: LockedIndex, index: CommitIndex): string[] {
  const found: string[] = [];
  if (index.tree !== lock.tree)
    found.push(`tree is ${index.tree} in the commit, ${lock.tree} in the lockfile`);
  const served = new Map<string, Summary>(index.skills.map(summaryOf).map((skill) => [skill.path, skill]));
  const listed = new Map<string, Summary>(lock.skills.map((skill) => [skill.path, skill]));
  for (const [path, want] of listed) {
    const have = served.get(path);
    if (have === undefined) {
      found.push(`skill ${path} is listed in the lockfile, and the commit does not serve it`);
      continue;
    }
    for (const field of FIELDS)
      if (have[field] !== want[field])
        found.push(`skill ${path}: ${field} is ${have[field]} in the commit, ${want[field]} in the lockfile`);
  }
  for (const path of served.keys())
    if (!listed.has(path))
      found.push(`skill ${path} is served by the commit, and the lockfile does not list it`);
  return found;
}

/** Refuses a locked commit whose index is not what its lock entry lists, naming the first difference. */
export function checkLocked(lock: LockedIndex, index: CommitIndex): void {
  const [first, ...more] = lockDifferences(lock, index);
  if (first === undefined) return;
  const others = more.length === 0 ? '' : ` (and ${more.length} more)`;
  throw new GitError(
    'source-lock-mismatch',
    `commit ${index.commit} does not match its lock entry: ${first}${others}`,
  );
}
