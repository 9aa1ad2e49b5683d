import { redact } from '../../shared/redact.ts';
import type { TreeEntry } from '../../shared/tree.ts';
import { GitError } from '../errors.ts';
import { objectTooLarge } from '../failure.ts';
import { MAX_OBJECT_BYTES, MAX_TREE_ENTRIES, MAX_TREE_LISTING_BYTES } from '../limits.ts';
import { canonical, decodeName, OID, tooManyEntries, treeEntry } from '../objects.ts';
import type { Git } from './run.ts';

/**
 * One record of `git ls-tree -z`: `<mode> SP <type> SP <oid> TAB <path>` (the path raw, NUL-terminated); with
 * `-l`, ` SP+ <size>` before the TAB: `-` for a tree or submodule, `BAD` for a blob the repository does not hold.
 */
const RECORD = /^([0-7]{6}) (?:blob|tree|commit) ([0-9a-f]{40})(?: +(\d+|-|BAD))?$/;

/**
 * A path as the tree walk builds it: each name decoded on its own (`decodeName`), joined with `/`. Decoding the
 * whole path at once gives the same text unless it holds U+FFFD or U+FEFF (a byte-order mark is dropped at the
 * start of each name): only then is it decoded name by name.
 */
export function decodePath(bytes: Buffer): string {
  const whole = decodeName(bytes);
  if (!whole.includes('\uFFFD') && !whole.includes('\uFEFF')) return whole;
  const names: string[] = [];
  for (let at = 0; ; ) {
    const slash = bytes.indexOf(0x2f, at);
    names.push(decodeName(bytes.subarray(at, slash === -1 ? bytes.length : slash)));
    if (slash === -1) return names.join('/');
    at = slash + 1;
  }
}

/**
 * Parses `git ls-tree -r -t -z` output (with `-l` or without) as it streams, within MAX_TREE_ENTRIES entries and
 * MAX_TREE_LISTING_BYTES bytes. Entries come out as the tree walk gives them (folders implied by paths), a blob's
 * size on its entry where `-l` gave it; subtree ids are kept apart. `tree` names the tree in messages.
 */
export function listingParser(tree: string) {
  const entries: TreeEntry[] = [];
  const trees: string[] = [];
  let pending: Buffer[] = [];
  let bytes = 0;
  let refused: Error | undefined;

  const record = (line: Buffer): boolean => {
    const tab = line.indexOf(9);
    const header = tab === -1 ? null : RECORD.exec(line.toString('latin1', 0, tab));
    if (header === null) {
      refused = new Error(`git ls-tree printed ${JSON.stringify(line.toString('latin1', 0, 100))}`);
      return false;
    }
    const { kind, executable } = canonical(Number.parseInt(header[1]!, 8));
    // Read from the bytes, not the match: a match's group is a slice of the header, and would keep it alive for as
    // long as the entry (a tree cache, an index) is held: 27 MiB of headers after an empty start of 1,000 sources.
    const at = header[0].indexOf(' ', 7) + 1;
    const id = line.toString('latin1', at, at + 40);
    if (kind === 'tree') {
      trees.push(id);
      return true;
    }
    if (entries.length >= MAX_TREE_ENTRIES) {
      refused = tooManyEntries(tree);
      return false;
    }
    const entry = treeEntry(decodePath(line.subarray(tab + 1)), kind, executable, id);
    const size = header[3];
    if (size !== undefined && size !== '-' && size !== 'BAD') entry.size = Number(size);
    entries.push(entry);
    return true;
  };

  return {
    entries,
    trees,
    /** The bytes git printed. */
    get bytes() {
      return bytes;
    },
    /** Why parsing stopped, when it did. */
    get refused() {
      return refused;
    },
    /** Takes one chunk of stdout; `false` when git must be stopped. */
    push(chunk: Buffer): boolean {
      if (refused !== undefined) return false;
      bytes += chunk.length;
      if (bytes > MAX_TREE_LISTING_BYTES) {
        refused = new GitError(
          'source-too-large',
          `the listing of ${tree} passed ${MAX_TREE_LISTING_BYTES} bytes`,
        );
        return false;
      }
      let at = 0;
      for (;;) {
        const nul = chunk.indexOf(0, at);
        if (nul === -1) break;
        let line = chunk.subarray(at, nul);
        if (pending.length > 0) {
          line = Buffer.concat([...pending, line]);
          pending = [];
        }
        if (!record(line)) return false;
        at = nul + 1;
      }
      if (at < chunk.length) pending.push(chunk.subarray(at));
      return true;
    },
    /** After git ended: whether it left a record unterminated. */
    get truncated() {
      return pending.length > 0;
    },
  };
}

/**
 * Every entry of `commit`'s tree with one `git ls-tree -r -t -l -z` (stdout parsed as it streams, git stopped past
 * the limits): in git's order, symlink targets not read, each blob the repository holds with its size (from its
 * header, as `cat-file --batch-check` gives it; `BAD`, a blob not held, has none). One tree object over
 * MAX_OBJECT_BYTES fails as reading it would (`source-too-large`); a missing or unreadable commit or tree is a
 * plain Error.
 */
export async function lsTree(
  git: Git,
  objectSizes: (oids: readonly string[]) => Promise<Array<number | undefined>>,
  commit: string,
): Promise<TreeEntry[]> {
  // An argument of git's: never one that could read as an option.
  if (!OID.test(commit)) throw new Error(`not an object id: ${JSON.stringify(commit)}`);
  const what = `the tree of commit ${commit}`;
  const parser = listingParser(what);
  const result = await git(['ls-tree', '-r', '-t', '-l', '-z', '--full-tree', commit], {
    onStdout: (chunk) => parser.push(chunk),
  });
  if (parser.refused !== undefined) throw parser.refused;
  if (result.code !== 0 || result.stopped !== undefined || parser.truncated)
    throw new Error(
      `git ls-tree of ${what} failed (${result.stopped ?? `exit ${result.code}`}): ${redact(result.stderr.trim()).split('\n').pop() ?? ''}`,
    );
  // A tree object is at most as large as the records git printed for its entries: only a listing larger than
  // MAX_OBJECT_BYTES can hold a tree larger than that, which a walk object by object would refuse.
  if (parser.bytes > MAX_OBJECT_BYTES) {
    const root = (await git(['rev-parse', '--verify', '--quiet', `${commit}^{tree}`])).stdout.toString(
      'latin1',
    );
    const ids = [root.trim(), ...new Set(parser.trees)];
    const sizes = await objectSizes(ids);
    const over = sizes.findIndex((size) => size !== undefined && size > MAX_OBJECT_BYTES);
    if (over !== -1) throw objectTooLarge(`object ${ids[over]}`, sizes[over]!);
  }
  return parser.entries;
}
