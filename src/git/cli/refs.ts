import { OID, type ObjectType } from '../objects.ts';
import { type Remote, type RemoteRef, wantedRef } from '../repository.ts';
import { redactUrl } from '../url.ts';
import { classifyRun, type RunContext } from './classify.ts';
import type { Git } from './run.ts';
import { type CliSettings, transport } from './transport.ts';

/** A ref as the store names it: the object and its type. */
interface RefTarget {
  oid: string;
  type?: ObjectType;
}

const OBJECT_TYPES: ReadonlySet<string> = new Set(['commit', 'tree', 'blob', 'tag']);

/** What each of `names` (full ref names, not HEAD) names, by one `git for-each-ref`: `undefined` where none. */
async function readRefs(git: Git, names: readonly string[]): Promise<Array<RefTarget | undefined>> {
  const result = await git([
    'for-each-ref',
    '--format=%(objectname) %(objecttype) %(refname)',
    '--',
    ...new Set(names),
  ]);
  // for-each-ref also lists refs below a name (refs/heads/main/x): only exact names count.
  const named = new Map<string, RefTarget>();
  for (const line of result.stdout.toString('utf8').split('\n')) {
    const typeEnd = line.indexOf(' ', 41);
    const type = line.slice(41, typeEnd);
    if (OID.test(line.slice(0, 40)) && typeEnd !== -1 && OBJECT_TYPES.has(type))
      named.set(line.slice(typeEnd + 1), { oid: line.slice(0, 40), type: type as ObjectType });
  }
  return names.map((name) => named.get(name));
}

async function readHead(git: Git): Promise<RefTarget | undefined> {
  const head = await git(['rev-parse', '--verify', '--quiet', 'HEAD']);
  const oid = head.stdout.toString('latin1').trim();
  return head.code === 0 && OID.test(oid) ? { oid } : undefined;
}

/**
 * A store's `refTarget` (and `readRef`, its oid): what a ref names and the object's type (HEAD's type is not said).
 * The refs asked for at once (a short name's branch and tag, which resolveLocalTarget asks together) are read by
 * one git process: at 1,000 local sources an empty start spent 29% of its CPU starting git processes.
 */
export function refReader(git: Git): (name: string) => Promise<RefTarget | undefined> {
  let asked: Array<{
    name: string;
    answer: (target: RefTarget | undefined) => void;
    fail: (error: unknown) => void;
  }> = [];
  const readAsked = () => {
    const batch = asked;
    asked = [];
    readRefs(
      git,
      batch.map(({ name }) => name),
    ).then(
      (targets) => {
        for (const [at, { answer }] of batch.entries()) answer(targets[at]);
      },
      (error: unknown) => {
        for (const { fail } of batch) fail(error);
      },
    );
  };
  return (name) => {
    if (name === 'HEAD') return readHead(git);
    return new Promise((answer, fail) => {
      if (asked.length === 0) queueMicrotask(readAsked);
      asked.push({ name, answer, fail });
    });
  };
}

/** The store's refs under `prefixes`. */
export async function listRefs(
  git: Git,
  local: RunContext,
  prefixes: readonly string[],
): Promise<Array<{ name: string; oid: string }>> {
  const result = await git(['for-each-ref', '--format=%(objectname) %(refname)', '--', ...prefixes]);
  if (result.code !== 0) throw classifyRun(result, 'listing the refs', local);
  return result.stdout
    .toString('utf8')
    .split('\n')
    .flatMap((line) =>
      OID.test(line.slice(0, 40)) ? [{ name: line.slice(41), oid: line.slice(0, 40) }] : [],
    )
    .filter((ref) => wantedRef(prefixes, ref.name));
}

/** Points `name` at `oid` (`oid` undefined: deletes it), never through a symbolic ref. */
export async function updateRef(git: Git, local: RunContext, name: string, oid?: string): Promise<void> {
  const result = await git(['update-ref', '--no-deref', ...(oid === undefined ? ['-d', name] : [name, oid])]);
  if (result.code !== 0)
    throw classifyRun(result, `${oid === undefined ? 'deleting' : 'writing'} ${name}`, local);
}

/** A repository's last ref listing: the same output again is the same refs, not parsed again. */
export interface LastListing {
  last?: { key: string; stdout: Buffer; refs: RemoteRef[] };
}

/**
 * The refs of `remote` named by `names` (a name ending in "/": every ref below it), by one `git ls-remote`; the
 * same output as `listing`'s last (a poll that finds nothing new) gives its refs again, unparsed.
 */
export async function listRemoteRefs(
  git: Git,
  settings: CliSettings,
  remote: Remote,
  names: readonly string[],
  listing: LastListing = {},
): Promise<RemoteRef[]> {
  const { context, ...run } = transport(remote, settings);
  // ls-remote matches its patterns against peeled entries too (`refs/tags/v1^{}`): ask for those as well.
  // A name ending in "/" is every ref below it: a glob, which matches the peeled entries as well.
  const patterns = names.flatMap((name) => (name.endsWith('/') ? [`${name}*`] : [name, `${name}^{}`]));
  const result = await git(['ls-remote', 'origin', ...patterns], run);
  if (result.code !== 0) throw classifyRun(result, `listing the refs of ${redactUrl(remote.url)}`, context);
  const key = JSON.stringify([remote.url, names]);
  const { last } = listing;
  if (last !== undefined && last.key === key && last.stdout.equals(result.stdout)) return [...last.refs];
  const refs = new Map<string, RemoteRef>();
  for (const line of result.stdout.toString('utf8').split('\n')) {
    const match = /^([0-9a-f]{40})\t(.+?)(\^\{\})?$/.exec(line);
    if (match === null) continue;
    const [, oid, name, peeled] = match as unknown as [string, string, string, string | undefined];
    const entry = refs.get(name) ?? { name, oid };
    if (peeled === undefined) entry.oid = oid;
    else entry.peeled = oid;
    refs.set(name, entry);
  }
  const wanted = [...refs.values()].filter((ref) => wantedRef(names, ref.name));
  listing.last = { key, stdout: result.stdout, refs: wanted };
  return [...wanted];
}
