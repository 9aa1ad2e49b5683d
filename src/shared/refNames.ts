import { SOURCE_ID_PATTERN } from './patterns.ts';

/** The refs a `refs:` pattern is matched against: branches and tags. */
export const REF_PREFIXES = ['refs/heads/', 'refs/tags/'] as const;

/** A branch or tag's name without `refs/heads/` or `refs/tags/`. */
export function shortRefName(name: string): string {
  const prefix = REF_PREFIXES.find((p) => name.startsWith(p));
  return prefix === undefined ? name : name.slice(prefix.length);
}

/** `*` matches any run of characters but `/`, as in git's refspecs; everything else matches itself. */
function globRegExp(pattern: string): RegExp {
  const escaped = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('[^/]*')}$`);
}

/** Whether the branch or tag `name` (full) matches one of `patterns`: full ones by full name, others by short. */
export function refMatcher(patterns: readonly string[]): (name: string) => boolean {
  const full = patterns.filter((p) => p.startsWith('refs/')).map(globRegExp);
  const short = patterns.filter((p) => !p.startsWith('refs/')).map(globRegExp);
  return (name) =>
    REF_PREFIXES.some((p) => name.startsWith(p)) &&
    (full.some((re) => re.test(name)) || short.some((re) => re.test(shortRefName(name))));
}

/**
 * The source id a ref of source `id` is served under: `<id>.<short name>`, lowercased, `/` and every other
 * character outside a URI reg-name turned into `-`. `undefined` when that is no valid source id (too long, or
 * starting or ending with `-` or `.`).
 */
export function refSourceId(id: string, name: string): string | undefined {
  const safe = shortRefName(name)
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-');
  const candidate = `${id}.${safe}`;
  return SOURCE_ID_PATTERN.test(candidate) ? candidate : undefined;
}

/** `v1`, `1.2.3`, `v2.10.0-rc.1`: numbers, and an optional pre-release after `-`. */
const VERSION = /^v?(\d+(?:\.\d+)*)(?:-([0-9A-Za-z.-]+))?$/;

interface Version {
  numbers: number[];
  pre?: string[];
}

function versionOf(name: string): Version | undefined {
  const match = VERSION.exec(shortRefName(name));
  if (match === null) return undefined;
  return {
    numbers: match[1]!.split('.').map(Number),
    pre: match[2]?.split('.'),
  };
}

/** SemVer §11 precedence, missing numbers as 0 (`v2` = `v2.0.0`): negative when `a` is older. */
function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < Math.max(a.numbers.length, b.numbers.length); i++) {
    const d = (a.numbers[i] ?? 0) - (b.numbers[i] ?? 0);
    if (d !== 0) return d;
  }
  if (a.pre === undefined || b.pre === undefined)
    return (a.pre === undefined ? 1 : 0) - (b.pre === undefined ? 1 : 0);
  for (let i = 0; i < Math.max(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i];
    const y = b.pre[i];
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    if (x === y) continue;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny) return Number(x) - Number(y);
    if (nx !== ny) return nx ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * The order refs are listed in: versions first, newest first (`v2.10.0` before `v2.9.0`), then the refs that are
 * no version, newest commit first (unknown times last), then by name so the order is total.
 */
export function compareRefs(
  a: { name: string; commitTime?: string },
  b: { name: string; commitTime?: string },
): number {
  return compareVersioned(a, versionOf(a.name), b, versionOf(b.name));
}

/** `refs` in the order refs are listed in (compareRefs), each name's version read once. */
export function sortRefs<T extends { name: string; commitTime?: string }>(refs: readonly T[]): T[] {
  const keyed = refs.map((ref) => ({ ref, version: versionOf(ref.name) }));
  keyed.sort((a, b) => compareVersioned(a.ref, a.version, b.ref, b.version));
  return keyed.map((k) => k.ref);
}

function compareVersioned(
  a: { name: string; commitTime?: string },
  va: Version | undefined,
  b: { name: string; commitTime?: string },
  vb: Version | undefined,
): number {
  if (va !== undefined && vb !== undefined) {
    const d = compareVersions(vb, va);
    if (d !== 0) return d;
  } else if (va !== undefined || vb !== undefined) return va === undefined ? 1 : -1;
  else {
    const ta = a.commitTime ?? '';
    const tb = b.commitTime ?? '';
    if (ta !== tb) return ta < tb ? 1 : -1;
  }
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
