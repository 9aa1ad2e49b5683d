import { describe, expect, it } from 'vitest';
import { cutPage, encodeCursor, startAfterKey, startOf } from '../../src/mcp/paging.ts';

const uris = ['skill://a/1', 'skill://a/2', 'skill://a/3', 'skill://a/4', 'skill://a/5'];
const keyOf = (uri: string) => uri;

describe('cutPage: the one way a page is cut', () => {
  it('takes at most size items from start, with a cursor naming the last one while more follow', () => {
    expect(cutPage(uris, { start: 0, size: 2, keyOf })).toEqual({
      items: ['skill://a/1', 'skill://a/2'],
      nextCursor: encodeCursor('skill://a/2'),
    });
    expect(cutPage(uris, { start: 3, size: 2, keyOf })).toEqual({ items: ['skill://a/4', 'skill://a/5'] });
    expect(cutPage(uris, { start: 5, size: 2, keyOf })).toEqual({ items: [] });
  });

  it('ends before the item that would pass the budget, and always holds its first item', () => {
    const cost = (uri: string) => (uri.endsWith('2') ? 50 : 10);
    expect(cutPage(uris, { start: 0, size: 5, keyOf, budget: { max: 40, cost } })).toEqual({
      items: ['skill://a/1'],
      nextCursor: encodeCursor('skill://a/1'),
    });
    expect(cutPage(uris, { start: 1, size: 5, keyOf, budget: { max: 40, cost } })).toEqual({
      items: ['skill://a/2'],
      nextCursor: encodeCursor('skill://a/2'),
    });
    expect(cutPage(uris, { start: 2, size: 5, keyOf, budget: { max: 30, cost } })).toEqual({
      items: ['skill://a/3', 'skill://a/4', 'skill://a/5'],
    });
  });

  it('starts after the cursor: by sort order, or after the item it names in a ranking', () => {
    const cursor = encodeCursor('skill://a/2');
    expect(startOf(uris, keyOf, cursor)).toBe(2);
    expect(startOf(uris, keyOf, encodeCursor('skill://a/25'))).toBe(2);
    expect(startAfterKey([...uris].reverse(), keyOf, cursor)).toBe(4);
    expect(() => startAfterKey(uris, keyOf, encodeCursor('skill://a/25'))).toThrow(
      'the cursor names a skill that no longer matches; start again without it',
    );
    expect(() => startOf(uris, keyOf, 'not-a-cursor')).toThrow('invalid cursor');
  });
});
