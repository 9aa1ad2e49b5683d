/** Repository paths: `/`-separated, no leading slash; `''` is the repository root. */

export function dirname(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? '' : path.slice(0, slash);
}

export function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function join(dir: string, name: string): string {
  if (name === '') return dir;
  return dir === '' ? name : `${dir}/${name}`;
}

/** True when `path` is `dir` itself or below it. */
export function isWithin(dir: string, path: string): boolean {
  return dir === '' || path === dir || path.startsWith(`${dir}/`);
}

/** `path` relative to `dir` (which must contain it). */
export function relative(dir: string, path: string): string {
  if (path === dir) return '';
  return dir === '' ? path : path.slice(dir.length + 1);
}

/** Resolves a relative symlink target against the link's folder; `undefined` when it climbs above the root. */
export function resolveRelative(fromDir: string, target: string): string | undefined {
  const parts = fromDir === '' ? [] : fromDir.split('/');
  for (const segment of target.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(segment);
  }
  return parts.join('/');
}
