import type { Resource, ServerContext } from '@modelcontextprotocol/server';
import type { Skill, SkillReadResult, SkillSource } from '@modelcontextprotocol/server/ext/skills';
import type { CatalogReader } from '../catalog/index.ts';
import { DEFAULT_PAGE_SIZE } from '../config/rules.ts';
import { decodeUtf8 } from '../skills/index.ts';
import { invalidParams } from './errors.ts';
import { locate } from './locate.ts';
import { cutPage, listPageSize, startOf } from './paging.ts';
import type { FileReader } from '../catalog/index.ts';
import { NAMESPACES_META, type ServedSkill } from './snapshot.ts';
import { type CatalogView, viewOf } from './view.ts';

export interface CatalogSourceOptions {
  /** Entries per page; absent: DEFAULT_PAGE_SIZE, the config's default. */
  pageSize?: number;
  read: FileReader;
}

/** A skills/list page: its entries, and in `_meta` the provenance of each namespace they belong to. */
export interface ListedPage {
  skills: Skill[];
  nextCursor?: string;
  _meta: { [NAMESPACES_META]: Record<string, Readonly<Record<string, string>>> };
}

/** A SkillSource that needs no request context and always answers (or throws -32602 naming the URI). */
export interface CatalogSkillSource extends SkillSource {
  // `_meta` goes past SkillSource's page: the SDK's skills/list handler copies only `skills` and `nextCursor`,
  // so answerFromSnapshots (handlers.ts), which replaces that handler, is what puts it on the result.
  list(params: { cursor?: string }, ctx?: ServerContext): Promise<ListedPage>;
  get(uri: string, ctx?: ServerContext): Promise<Skill>;
  read(uri: string, ctx?: ServerContext): Promise<SkillReadResult>;
  readDirectory(
    uri: string,
    params: { cursor?: string },
    ctx?: ServerContext,
  ): Promise<{ resources: Resource[]; nextCursor?: string }>;
}

/** One record per namespace on the page, keyed by the namespace's URI: what its entries share, given once. */
function pageMeta(page: readonly ServedSkill[]): ListedPage['_meta'] {
  const records: Record<string, Readonly<Record<string, string>>> = {};
  for (const { namespace } of page) records[namespace.uri] = namespace.provenance;
  return { [NAMESPACES_META]: records };
}

const uriOf = (served: ServedSkill) => served.uri;

/** The listing page of `view` starting at `start`: its entries, its cursor, its namespaces' records. Frozen. */
function listedPage(view: CatalogView, start: number, size: number): ListedPage {
  const { items, nextCursor } = cutPage(view.listed, { start, size, keyOf: uriOf });
  const skills = Object.freeze(items.map((served) => served.listEntry)) as Skill[];
  const _meta = Object.freeze(pageMeta(items));
  return Object.freeze(nextCursor === undefined ? { skills, _meta } : { skills, nextCursor, _meta });
}

/**
 * The one SkillSource behind every namespace, answering from snapshots: listing shows each source's current
 * commit; entries, files and folders of retained commits are served too.
 */
export function catalogSkillSource(
  catalog: CatalogReader,
  options: CatalogSourceOptions,
): CatalogSkillSource {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  // A view's pages from the start, built once (so their bytes can be too: pageBytes.ts); a cursor that lands
  // elsewhere (one from before a swap, or forged) gets a page built for it, so they are never more than the
  // listing once over.
  const pages = new WeakMap<CatalogView, Map<number, ListedPage>>();
  return {
    async list({ cursor }: { cursor?: string }) {
      const view = viewOf(catalog);
      const start = startOf(view.listed, uriOf, cursor);
      // A large catalog gets larger pages, so a host's listing never takes more than MAX_LIST_PAGES.
      const size = listPageSize(pageSize, view.listed.length);
      if (start % size !== 0) return listedPage(view, start, size);
      let built = pages.get(view);
      if (built === undefined) pages.set(view, (built = new Map()));
      let listed = built.get(start);
      if (listed === undefined) built.set(start, (listed = listedPage(view, start, size)));
      return listed;
    },
    async get(uri: string) {
      const found = locate(catalog, uri);
      const served = found.snapshot.skills.get(found.uri);
      if (served === undefined) throw invalidParams(`No skill is served at ${uri}`, uri);
      return served.entry;
    },
    async read(uri: string): Promise<SkillReadResult> {
      const { snapshot, uri: canonical } = locate(catalog, uri);
      const file = snapshot.files.get(canonical);
      if (file === undefined)
        throw invalidParams(
          snapshot.dirs.has(canonical)
            ? `${uri} is a directory; read it with resources/directory/read`
            : `${uri}: no such file in ${snapshot.uri}`,
          uri,
        );
      const bytes = await options.read(snapshot.ns, file);
      // Spec §Reading: text whenever the bytes decode losslessly as UTF-8, otherwise a blob.
      const text = decodeUtf8(bytes);
      return text === undefined ? { bytes, mimeType: file.mimeType } : { text, mimeType: file.mimeType };
    },
    async readDirectory(uri: string, { cursor }: { cursor?: string }) {
      const { snapshot, uri: canonical } = locate(catalog, uri);
      const children = snapshot.dirs.get(canonical);
      if (children === undefined)
        throw invalidParams(
          snapshot.files.has(canonical)
            ? `${uri} is not a directory resource`
            : `${uri}: no such directory in ${snapshot.uri}`,
          uri,
        );
      const keyOf = (child: Resource) => child.uri;
      const result = cutPage(children, { start: startOf(children, keyOf, cursor), size: pageSize, keyOf });
      return result.nextCursor === undefined
        ? { resources: result.items }
        : { resources: result.items, nextCursor: result.nextCursor };
    },
    async listResources() {
      return [...viewOf(catalog).resources];
    },
  };
}
