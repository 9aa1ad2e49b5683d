import { describe, expect, it } from 'vitest';
import { rebuilt } from '../../src/sync/retention.ts';

const c = (letter: string, commitTime?: string) => ({
  commit: letter.repeat(40),
  ...(commitTime === undefined ? {} : { commitTime }),
});

describe('rebuilding what a source serves from the commits dataDir holds', () => {
  const held = [
    c('a', '2024-05-01T00:00:00.000Z'),
    c('b', '2024-05-03T00:00:00.000Z'),
    c('c'),
    c('d', '2024-05-02T00:00:00.000Z'),
  ];

  it('serves the newest, retains the next newest up to keep, and drops the rest (unknown times last)', () => {
    expect(rebuilt(held, undefined, 2)).toEqual({
      current: c('b', '2024-05-03T00:00:00.000Z'),
      retained: [c('d', '2024-05-02T00:00:00.000Z'), c('a', '2024-05-01T00:00:00.000Z')],
      dropped: [c('c')],
    });
  });

  it('serves the pinned commit when dataDir holds it, whatever its time', () => {
    const { current, retained } = rebuilt(held, 'a'.repeat(40), 1);
    expect([current?.commit, retained.map((r) => r.commit)]).toEqual(['a'.repeat(40), ['b'.repeat(40)]]);
  });

  it('serves nothing when dataDir holds nothing', () => {
    expect(rebuilt([], 'a'.repeat(40), 2)).toEqual({ retained: [], dropped: [] });
  });
});
