import {
  type CatalogReader,
  type CatalogState,
  type FileReader,
  listedOf,
  type Namespace,
  type Visibility,
  visibleSources,
} from '../catalog/index.ts';
import { DEFAULT_PAGE_SIZE } from '../config/rules.ts';
import { byteLru, type ByteLru } from '../shared/byteLru.ts';
import { parseSkillMd, SKILL_MD } from '../skills/index.ts';
import type { SearchStats } from '../shared/status.ts';
import { cutPage, listPageSize, startOf } from './paging.ts';
import type { SearchHit, SkillIndex } from './search.ts';
import { buildSnapshot, NAMESPACES_META, type ServedSkill, type Snapshot } from './snapshot.ts';
import { buildView, type CatalogView } from './view.ts';
import type { Skill } from '@modelcontextprotocol/server/ext/skills';

/** A skills/list page: its entries, and in `_meta` the provenance of each namespace they belong to. Frozen. */
export interface ListedPage {
  skills: Skill[];
  nextCursor?: string;
  _meta: { [NAMESPACES_META]: Record<string, Readonly<Record<string, string>>> };
}

/**
 * A listing page as JSON text, written once: the hint-free part of a skills/list result (`"skills":[…]` and its
 * `"nextCursor"` when it has one) and the members of its `_meta` (the namespace records), each without braces,
 * for a writer that puts a result's other members around them (mcp/handlers.ts).
 */
export interface PageText {
  readonly entries: Buffer;
  readonly meta: Buffer;
  /** The next page's cursor (none on the last page). */
  readonly nextCursor?: string;
}

/** Bytes of listing pages kept as text by one owner, all visibilities and catalog states together. */
export const PAGE_TEXT_BYTES = 32 * 1024 * 1024;

/**
 * What one caller is served at one catalog state, built at its first request and kept while that state is the
 * catalog's: snapshots, the listing (entries, pages, resources, names, prompts) and the search indexes. Handlers,
 * tools and prompts look things up in it; they build and keep nothing.
 */
export interface ServingState extends CatalogView {
  /** The sources this caller sees, and their failures. */
  readonly state: CatalogState;
  /** Entries per page as configured (directory reads; a large listing gets larger pages: paging.ts). */
  readonly pageSize: number;
  /** The listed namespaces this caller sees: each source's current commit, unless it is not listed. */
  readonly namespaces: readonly Namespace[];
  /** The namespace of `source` at `commit` (current or retained) if this caller sees it. */
  namespace(source: string, commit: string): Namespace | undefined;
  snapshot(ns: Namespace): Snapshot;
  snapshotAt(source: string, commit: string): Snapshot | undefined;
  /** The listing page after `cursor`, cut for each request. */
  listing(cursor: string | undefined): ListedPage;
  /** The same page as text: a page from the start is written once while its bytes are among PAGE_TEXT_BYTES kept. */
  listingText(cursor: string | undefined): PageText;
  /** The first `max` prompts, in listing order. */
  servedPrompts(max: number): ReadonlyMap<string, ServedSkill>;
  /** A skill's SKILL.md body (its instructions), read once. */
  promptBody(served: ServedSkill, read: FileReader): Promise<string>;
  /** The search index of `ns`, loaded (or built) at its first use. */
  searchIndex(ns: Namespace): Promise<SkillIndex>;
  /** The skills of `namespaces` matching `query`, best first across them. */
  search(
    namespaces: readonly Namespace[],
    query: string,
    groups?: ReadonlyMap<string, string>,
  ): Promise<SearchHit[]>;
  /** The first `limit` of what `search` finds, and how many it finds: no hit is made for the others. */
  searchTop(
    namespaces: readonly Namespace[],
    query: string,
    limit: number,
    groups?: ReadonlyMap<string, string>,
  ): Promise<{ hits: SearchHit[]; total: number }>;
}

/** The owner of everything served over one catalog: one ServingState per (catalog state, visibility). */
export interface ServingOwner {
  readonly catalog: CatalogReader;
  /** What `visibility` is served at the catalog's state now. */
  at(visibility: Visibility): ServingState;
  /** Makes `ns` (served now) ready: its snapshot, then its search index (a failed build is tried again by the
   * next search). */
  prepare(ns: Namespace): Promise<void>;
  /** What building `ns`'s search index cost, once it is built (`ns` served now). */
  searchStats(ns: Namespace): SearchStats | undefined;
}

/** Ranked search (and the stemmer with it), loaded with the first search: a server that lists loads none of it. */
const searchModule = () => import('./search.ts');

/** What is kept of one namespace while a catalog state that serves it lives: carried over a swap that keeps it. */
class NamespaceServing {
  #snapshot: Snapshot | undefined;
  #index: Promise<SkillIndex> | undefined;
  #bodies = new Map<string, Promise<string>>();
  stats: SearchStats | undefined;
  constructor(readonly ns: Namespace) {}

  get snapshot(): Snapshot {
    return (this.#snapshot ??= buildSnapshot(this.ns));
  }

  searchIndex(): Promise<SkillIndex> {
    if (this.#index === undefined) {
      const index = searchModule().then((search) => search.loadSkillIndex(this.ns, this.snapshot));
      this.#index = index;
      // A build that failed is tried again at the next search (its callers get the error).
      index.then(
        (built) => (this.stats = built.stats),
        () => (this.#index = undefined),
      );
    }
    return this.#index;
  }

  promptBody(served: ServedSkill, read: FileReader): Promise<string> {
    let body = this.#bodies.get(served.uri);
    if (body === undefined) {
      body = read(served.ns, served.files.get(SKILL_MD)!).then((bytes) => {
        const parsed = parseSkillMd(bytes);
        return parsed.ok ? parsed.body : '';
      });
      this.#bodies.set(served.uri, body);
      body.catch(() => this.#bodies.delete(served.uri));
    }
    return body;
  }
}

/**
 * What a visibility lists (its view and its page size) over its listed namespaces: kept
 * across catalog swaps that list the same namespaces (a sync that found nothing new swaps a state all the same), so
 * no listing after one pays for the view again.
 */
interface Listing {
  /** Names this listing's pages among the texts its owner keeps. */
  readonly id: number;
  readonly namespaces: readonly Namespace[];
  built?: { view: CatalogView; size: number };
}

/** Visibilities whose listing a swap carries over at most (each caller's own set of sources is one). */
const MAX_KEPT_LISTINGS = 64;

/** One catalog state: its namespaces' serving, one ServingState per visibility key, and the listings kept. */
interface StateServing {
  readonly state: CatalogState;
  /** The owner's page texts, kept across states by listing id and start. */
  readonly texts: Texts;
  readonly namespaces: ReadonlyMap<Namespace, NamespaceServing>;
  readonly visible: Map<string, ServingState>;
  readonly listings: Map<string, Listing>;
}

/** Listing pages as text, least recently used dropped past PAGE_TEXT_BYTES, and the next listing's id. */
interface Texts {
  readonly pages: ByteLru<PageText>;
  next: number;
}

function stateServing(state: CatalogState, previous: StateServing | undefined, texts: Texts): StateServing {
  const namespaces = new Map<Namespace, NamespaceServing>();
  for (const source of state.sources)
    for (const ns of [source.current, ...source.retained])
      namespaces.set(ns, previous?.namespaces.get(ns) ?? new NamespaceServing(ns));
  // The listings used last, newest last: one that lists other namespaces now is replaced at its next use.
  const listings = new Map([...(previous?.listings ?? [])].slice(-MAX_KEPT_LISTINGS));
  return { state, namespaces, texts, visible: new Map(), listings };
}

const sameNamespaces = (a: readonly Namespace[], b: readonly Namespace[]) =>
  a.length === b.length && a.every((ns, i) => ns === b[i]);

/** The listing of visibility `key` over `namespaces`: the one kept when it lists them, else a new one (kept from now on). */
function listingOf(owner: StateServing, key: string, namespaces: readonly Namespace[]): Listing {
  let kept = owner.listings.get(key);
  owner.listings.delete(key);
  if (kept === undefined || !sameNamespaces(kept.namespaces, namespaces))
    kept = { id: owner.texts.next++, namespaces };
  owner.listings.set(key, kept);
  return kept;
}

/** The namespaces of `state` by `<source>@<commit>`. */
function keyed(state: CatalogState): Map<string, Namespace> {
  const map = new Map<string, Namespace>();
  for (const source of state.sources)
    for (const ns of [source.current, ...source.retained]) map.set(`${ns.source}@${ns.commit}`, ns);
  return map;
}

/** One namespace record per namespace on the page, keyed by the namespace's URI. */
function pageMeta(page: readonly ServedSkill[]): ListedPage['_meta'] {
  const records: Record<string, Readonly<Record<string, string>>> = {};
  for (const { namespace } of page) records[namespace.uri] = namespace.provenance;
  return { [NAMESPACES_META]: records };
}

const uriOf = (served: ServedSkill) => served.uri;

const utf8 = (text: string) => Buffer.from(text, 'utf8');

/** Where a page's text is written, entry by entry: kept between pages (each is written to its end at once). */
let pageBytes = Buffer.allocUnsafeSlow(1 << 16);

/**
 * The text of the page of `listed` starting at `start`: its JSON members, each set without the braces around it, as
 * `JSON.stringify` of the page (`listedPage`) writes them. Each entry is made, written and let go in turn: made all
 * at once, a page's entries and its JSON string outlived the young generation's collections, which grew it to its
 * largest (32 MiB) as warming wrote a listing of 100,000 skills just before ready.
 */
function pageText(listed: readonly ServedSkill[], start: number, size: number): PageText {
  const { items, nextCursor } = cutPage(listed, { start, size, keyOf: uriOf });
  let used = 0;
  const write = (text: string) => {
    // At most 3 bytes a UTF-16 unit: room is made without measuring the text first (a second pass over it).
    const most = text.length * 3;
    if (used + most > pageBytes.length) {
      const larger = Buffer.allocUnsafeSlow(Math.max(pageBytes.length * 2, used + most));
      pageBytes.copy(larger, 0, 0, used);
      pageBytes = larger;
    }
    used += pageBytes.write(text, used);
  };
  write('"skills":[');
  for (const [i, served] of items.entries()) {
    if (i > 0) write(',');
    write(JSON.stringify(served.listEntry));
  }
  write(']');
  if (nextCursor !== undefined) write(`,"nextCursor":${JSON.stringify(nextCursor)}`);
  const entries = Buffer.from(pageBytes.subarray(0, used));
  const meta = utf8(JSON.stringify(pageMeta(items)).slice(1, -1));
  return nextCursor === undefined ? { entries, meta } : { entries, meta, nextCursor };
}

/** The listing page of `listed` starting at `start`: its entries, its cursor, its namespaces' records. Frozen. */
function listedPage(listed: readonly ServedSkill[], start: number, size: number): ListedPage {
  const { items, nextCursor } = cutPage(listed, { start, size, keyOf: uriOf });
  const skills = Object.freeze(items.map((served) => served.listEntry)) as Skill[];
  const _meta = Object.freeze(pageMeta(items));
  return Object.freeze(nextCursor === undefined ? { skills, _meta } : { skills, nextCursor, _meta });
}

function servingState(owner: StateServing, visibility: Visibility, configuredPageSize: number): ServingState {
  const state = visibility.all ? owner.state : visibleSources(owner.state, visibility);
  const byKey = keyed(state);
  const entry = (ns: Namespace) => owner.namespaces.get(ns) ?? new NamespaceServing(ns);
  const snapshot = (ns: Namespace) => entry(ns).snapshot;
  const namespaces = listedOf(state);
  const kept = listingOf(owner, visibility.key, namespaces);
  // Built at the first request that needs it (warming builds the snapshots first, one a turn).
  const listing = () => {
    if (kept.built === undefined) {
      const view = buildView(namespaces, snapshot);
      // A large catalog gets larger pages, so a host's listing never takes more than MAX_LIST_PAGES.
      kept.built = { view, size: listPageSize(configuredPageSize, view.listed.length) };
    }
    return kept.built;
  };
  // A page is cut when asked for: its entries are made from the index then (snapshot.ts), and what is kept of
  // pages is their text, within PAGE_TEXT_BYTES.
  const startAt = (cursor: string | undefined) => startOf(listing().view.listed, uriOf, cursor);
  const pageAt = (start: number): ListedPage => {
    const { view, size } = listing();
    return listedPage(view.listed, start, size);
  };
  const capped = new Map<number, ReadonlyMap<string, ServedSkill>>();
  return {
    get listed() {
      return listing().view.listed;
    },
    get resources() {
      return listing().view.resources;
    },
    get named() {
      return listing().view.named;
    },
    get prompts() {
      return listing().view.prompts;
    },
    state,
    pageSize: configuredPageSize,
    namespaces,
    namespace: (source, commit) => byKey.get(`${source}@${commit}`),
    snapshot,
    snapshotAt(source, commit) {
      const ns = byKey.get(`${source}@${commit}`);
      return ns === undefined ? undefined : snapshot(ns);
    },
    listing: (cursor) => pageAt(startAt(cursor)),
    listingText(cursor) {
      const start = startAt(cursor);
      const { view, size } = listing();
      if (start % size !== 0) return pageText(view.listed, start, size);
      const key = `${kept.id}:${start}`;
      let text = owner.texts.pages.get(key);
      if (text === undefined) owner.texts.pages.set(key, (text = pageText(view.listed, start, size)));
      return text;
    },
    servedPrompts(max) {
      let prompts = capped.get(max);
      if (prompts === undefined)
        capped.set(max, (prompts = new Map([...listing().view.prompts].slice(0, max))));
      return prompts;
    },
    promptBody: (served, read) => entry(served.ns).promptBody(served, read),
    searchIndex: (ns) => entry(ns).searchIndex(),
    async search(searched, query, groups) {
      const indexes = await Promise.all(searched.map((ns) => entry(ns).searchIndex()));
      return (await searchModule()).searchIndexes(indexes, query, groups);
    },
    async searchTop(searched, query, limit, groups) {
      const indexes = await Promise.all(searched.map((ns) => entry(ns).searchIndex()));
      const search = await searchModule();
      // Versions of a `refs:` source's skill are one hit: ranked all together.
      if (groups !== undefined && searched.some((ns) => groups.has(ns.source))) {
        const hits = search.searchIndexes(indexes, query, groups);
        return { hits: hits.slice(0, limit), total: hits.length };
      }
      return search.searchIndexesTop(indexes, query, limit);
    },
  };
}

/**
 * The one owner of what is served over `catalog`: the catalog's current state is served from one StateServing
 * (built at the first request after a swap, carrying over what it keeps of the last one), and each visibility from
 * a ServingState built at its first request. Nothing older is kept: a request that holds a state finishes on it.
 */
export function createServingOwner(
  catalog: CatalogReader,
  options: { pageSize?: number } = {},
): ServingOwner {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const sizeOf = (text: PageText) => text.entries.byteLength + text.meta.byteLength;
  const texts: Texts = { pages: byteLru(PAGE_TEXT_BYTES, PAGE_TEXT_BYTES, sizeOf), next: 0 };
  let latest: StateServing | undefined;
  const now = (): StateServing => {
    if (latest?.state !== catalog.state) latest = stateServing(catalog.state, latest, texts);
    return latest;
  };
  return {
    catalog,
    at(visibility) {
      const serving = now();
      let seen = serving.visible.get(visibility.key);
      if (seen === undefined)
        serving.visible.set(visibility.key, (seen = servingState(serving, visibility, pageSize)));
      return seen;
    },
    async prepare(ns) {
      const entry = now().namespaces.get(ns);
      if (entry === undefined) return;
      void entry.snapshot;
      await entry.searchIndex();
    },
    searchStats: (ns) => now().namespaces.get(ns)?.stats,
  };
}
