import type { TreeEntry } from '../shared/tree.ts';
import { MAX_SYMLINK_HOPS } from './limits.ts';
import { dirname, isWithin, join, resolveRelative } from './paths.ts';

/** Where a path leads once every symlink on it is followed inside the commit's tree (never the file system). */
export type Resolution =
  /** An entry of the tree (a file or a submodule), at its own path. */
  | { kind: 'found'; entry: TreeEntry }
  /** Nothing there in this commit (a folder, a missing path, or a link whose target was not read). */
  | { kind: 'missing'; target: string }
  /** A link's target is absolute or leaves `within`. */
  | { kind: 'outside'; target: string; absolute: boolean }
  /** More than MAX_SYMLINK_HOPS links on the way: a loop, or a chain too long to follow. */
  | { kind: 'loop' };

/**
 * Resolves `path` inside the commit's tree: a symlink anywhere on it (the last name or a folder) is replaced by its
 * target, read relative to the link's folder, at most MAX_SYMLINK_HOPS times. Every step must stay within `within`
 * (`''`: the repository) and, when `within` is a folder, never be that folder itself.
 */
export function resolveInTree(
  path: string,
  entryAt: (path: string) => TreeEntry | undefined,
  within = '',
): Resolution {
  let current = path;
  let target = path;
  for (let hops = 0; ; hops++) {
    const link = firstLink(current, entryAt);
    if (link === undefined) {
      const entry = entryAt(current);
      return entry === undefined ? { kind: 'missing', target } : { kind: 'found', entry };
    }
    if (hops === MAX_SYMLINK_HOPS) return { kind: 'loop' };
    // A target too long to be read resolves nowhere.
    if (link.entry.target === undefined) return { kind: 'missing', target: '' };
    target = link.entry.target;
    if (target.startsWith('/')) return { kind: 'outside', target, absolute: true };
    const resolved = resolveRelative(dirname(link.entry.path), target);
    if (resolved === undefined || !isWithin(within, resolved) || (within !== '' && resolved === within))
      return { kind: 'outside', target, absolute: false };
    current = join(resolved, link.rest);
  }
}

/** The first symlink on `path` (the shortest prefix that is one), with what follows it. */
function firstLink(
  path: string,
  entryAt: (path: string) => TreeEntry | undefined,
): { entry: TreeEntry; rest: string } | undefined {
  for (let end = path.indexOf('/'); ; end = path.indexOf('/', end + 1)) {
    const prefix = end === -1 ? path : path.slice(0, end);
    const entry = entryAt(prefix);
    if (entry?.type === 'symlink') return { entry, rest: end === -1 ? '' : path.slice(end + 1) };
    // A file or submodule holds nothing below it; the caller finds nothing there.
    if (end === -1 || entry !== undefined) return undefined;
  }
}
