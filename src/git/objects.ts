import { createHash } from 'node:crypto';
import type { TreeEntry } from '../shared/tree.ts';
import { GitError } from './errors.ts';
import { MAX_TREE_ENTRIES } from './limits.ts';

/** The four object types, as git names them. */
export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag';

/** One object read from a repository: its type and raw content (after the `<type> <size>\0` header). */
export interface GitObject {
  type: ObjectType;
  data: Buffer;
}

export const OID = /^[0-9a-f]{40}$/;

/** One tree entry as git reads it: the mode canonicalised exactly as git's `canon_mode` does. */
export interface RawTreeEntry {
  kind: 'tree' | 'file' | 'symlink' | 'submodule';
  executable: boolean;
  name: string;
  oid: string;
}

const lossyUtf8 = new TextDecoder('utf-8');

/**
 * A tree entry's name as text: bytes that are not UTF-8 decode to U+FFFD (and a leading byte-order mark goes, as
 * TextDecoder drops it).
 */
export function decodeName(bytes: Uint8Array): string {
  return lossyUtf8.decode(bytes);
}

/** git's canon_mode: a regular file keeps only its owner-execute bit; anything not file, link or tree is a gitlink. */
export function canonical(mode: number): Pick<RawTreeEntry, 'kind' | 'executable'> {
  switch (mode & 0o170000) {
    case 0o100000:
      return { kind: 'file', executable: (mode & 0o100) !== 0 };
    case 0o120000:
      return { kind: 'symlink', executable: false };
    case 0o040000:
      return { kind: 'tree', executable: false };
    default:
      return { kind: 'submodule', executable: false };
  }
}

/** The entry a walk lists for a file, symlink or submodule at `path` (`executable` only on a file that is). */
export function treeEntry(path: string, kind: TreeEntry['type'], executable: boolean, id: string): TreeEntry {
  return kind === 'file' && executable
    ? { path, type: kind, id, executable: true }
    : { path, type: kind, id };
}

/**
 * A tree's entries, parsed from the raw object. Names are data, never refused here (a backslash, `..`): the skill
 * rules report them. Bytes that are not UTF-8 decode to U+FFFD, which the rules also report.
 */
export function parseTree(data: Buffer, oid: string): RawTreeEntry[] {
  const entries: RawTreeEntry[] = [];
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const nul = space === -1 ? -1 : data.indexOf(0x00, space + 1);
    if (space === -1 || nul === -1 || nul + 21 > data.length) throw new Error(`tree ${oid} is malformed`);
    const modeText = data.toString('latin1', at, space);
    // git's decode_tree_entry refuses a mode that is not octal.
    if (!/^[0-7]{1,7}$/.test(modeText)) throw new Error(`tree ${oid} has a malformed mode`);
    entries.push({
      ...canonical(Number.parseInt(modeText, 8)),
      name: decodeName(data.subarray(space + 1, nul)),
      oid: data.toString('hex', nul + 1, nul + 21),
    });
    at = nul + 21;
  }
  return entries;
}

/**
 * A tree that lists into more than MAX_TREE_ENTRIES entries (files, symlinks, submodules) is not walked; `tree`
 * names it in the message (`tree <id>`, `the tree of commit <id>`).
 */
export function tooManyEntries(tree: string): GitError {
  return new GitError('source-too-large', `${tree} holds more than ${MAX_TREE_ENTRIES} entries`);
}

/** The header lines of a commit or tag, up to the blank line before the message. */
function headers(data: Buffer): string[] {
  const end = data.indexOf('\n\n');
  return data.toString('utf8', 0, end === -1 ? data.length : end).split('\n');
}

/** The time of a `committer` or `tagger` line: "committer Name <email> 1714521600 +0000" (after the last '>'). */
function timeOf(lines: string[], header: string): number | undefined {
  const line = lines.find((candidate) => candidate.startsWith(`${header} `));
  const time = line === undefined ? undefined : /> (\d{1,15}) [+-]\d{4}$/.exec(line)?.[1];
  return time === undefined ? undefined : Number(time);
}

/** A commit's tree and committer time (seconds since the epoch). */
export function parseCommit(data: Buffer, oid: string): { tree: string; committerTime: number } {
  const lines = headers(data);
  const tree = /^tree ([0-9a-f]{40})$/.exec(lines[0] ?? '')?.[1];
  const committerTime = timeOf(lines, 'committer');
  if (tree === undefined || committerTime === undefined) throw new Error(`commit ${oid} is malformed`);
  return { tree, committerTime };
}

/** What an annotated tag points at, its name and its tagger time (seconds since the epoch), when it has one. */
export function parseTag(
  data: Buffer,
  oid: string,
): { object: string; type: string; tag?: string; taggerTime?: number } {
  const lines = headers(data);
  const object = /^object ([0-9a-f]{40})$/.exec(lines[0] ?? '')?.[1];
  const type = /^type ([a-z]+)$/.exec(lines[1] ?? '')?.[1];
  if (object === undefined || type === undefined) throw new Error(`tag ${oid} is malformed`);
  const tag = /^tag (.+)$/.exec(lines[2] ?? '')?.[1];
  const taggerTime = timeOf(lines, 'tagger');
  return { object, type, tag, taggerTime };
}

/** The id git gives `bytes` as a blob: the SHA-1 of `blob <size>\0<bytes>`. */
export function blobId(bytes: Uint8Array): string {
  return createHash('sha1').update(`blob ${bytes.byteLength}\0`).update(bytes).digest('hex');
}
