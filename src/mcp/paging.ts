import { SCHEME } from '../catalog/index.ts';
import { MAX_URI_BYTES } from '../skills/index.ts';
import { compareText, firstNotBefore, quoteInput } from '../shared/text.ts';
import { invalidParams } from './errors.ts';

/**
 * The pages a host's listing may take at most: the SDK client's `listMaxPages` (default 64) stops an auto-walking
 * `SkillsClient.list()` with an error past it, so a catalog of 6,400 skills or more at 100 a page could not be listed.
 */
export const MAX_LIST_PAGES = 64;
/** Entries a skills/list page holds at most however large the catalog (the config's largest `pageSize`): with
 * MAX_LIST_PAGES, 640,000 skills list in 64 pages; a page's bytes stay bounded by this many entries. */
export const MAX_LIST_PAGE_SIZE = 10_000;

/** Entries per skills/list page for a listing of `listed` skills: the configured size, or more where that would
 * need more than MAX_LIST_PAGES pages (up to MAX_LIST_PAGE_SIZE). */
export const listPageSize = (configured: number, listed: number) =>
  Math.max(configured, Math.min(MAX_LIST_PAGE_SIZE, Math.ceil(listed / MAX_LIST_PAGES)));

// Cursors name the last URI of the previous page, so paging survives a catalog swap (spec: stable cursors).
export const encodeCursor = (uri: string) => Buffer.from(uri, 'utf8').toString('base64url');

/** The longest cursor this server writes: the base64url of the longest URI it serves. Schemas refuse longer. */
export const MAX_CURSOR_CHARS = Math.ceil((MAX_URI_BYTES * 4) / 3);

function decodeCursor(cursor: string): string {
  const uri = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!uri.startsWith(SCHEME) || encodeCursor(uri) !== cursor)
    throw invalidParams(`invalid cursor ${quoteInput(cursor)}`);
  return uri;
}

/** The index of the first item whose key sorts after `after` (items sorted by key). */
function firstAfter<T>(items: readonly T[], keyOf: (item: T) => string, after: string): number {
  return firstNotBefore(items.length, (at) => compareText(keyOf(items[at]!), after) <= 0);
}

/** Where the page after the cursor starts in `items` sorted by the URI `keyOf` gives (0 without one). */
export const startOf = <T>(items: readonly T[], keyOf: (item: T) => string, cursor: string | undefined) =>
  cursor === undefined ? 0 : firstAfter(items, keyOf, decodeCursor(cursor));

/** Where the page after the cursor starts in `items` in any order (a ranking): after the item the cursor names. */
export function startAfterKey<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  cursor: string | undefined,
): number {
  if (cursor === undefined) return 0;
  const after = decodeCursor(cursor);
  const at = items.findIndex((item) => keyOf(item) === after);
  if (at === -1)
    throw invalidParams('the cursor names a skill that no longer matches; start again without it');
  return at + 1;
}

/** A page: its items, and the cursor of the next page when more follow. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

/** How to cut a page: where it starts, how many items it holds at most, and optionally a budget its items'
 * costs may not pass (a page always holds its first item). */
export interface Cut<T> {
  start: number;
  size: number;
  keyOf: (item: T) => string;
  budget?: { max: number; cost: (item: T) => number };
}

/** The one way a page is cut (skills/list, its cache, directory reads, skill_list): from `start`, at most `size`
 * items, ending before the one that would pass the budget; the cursor names the page's last key. */
export function cutPage<T>(items: readonly T[], { start, size, keyOf, budget }: Cut<T>): Page<T> {
  let end = Math.min(items.length, start + size);
  if (budget !== undefined) {
    let spent = 0;
    for (let at = start; at < end; at++) {
      spent += budget.cost(items[at]!);
      if (at > start && spent > budget.max) end = at;
    }
  }
  const last = items[end - 1];
  return end < items.length && end > start && last !== undefined
    ? { items: items.slice(start, end), nextCursor: encodeCursor(keyOf(last)) }
    : { items: items.slice(start, end) };
}
