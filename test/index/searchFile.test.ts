import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { indexStore, maxSearchFileBytes, type IndexOptions } from '../../src/index/store.ts';
import { PLACE, PostingsBuilder } from '../../src/index/postings.ts';
import { buildSearchData, type SearchData, searchInputs } from '../../src/index/searchBuild.ts';
import { decodeSearch, encodeSearch, SEARCH_FORMAT } from '../../src/index/searchFile.ts';
import { commitIndexOf, oneFileSkill } from '../helpers/catalog.ts';
import { tempDir } from '../helpers/temp.ts';

const OPTIONS: IndexOptions = { paths: [], strictNames: false };

/** An index of `count` one-file skills whose SKILL.md bodies are their blobs' text. */
function catalogOf(count: number) {
  const bodies = new Map<string, string>();
  const skills = Array.from({ length: count }, (_, i) => {
    const blob = i.toString(16).padStart(40, '0');
    bodies.set(
      blob,
      `---\nname: s${i}\ndescription: d\n---\n# Ledger ${i % 7}\nReconcile invoices word${i}.\n`,
    );
    return oneFileSkill(`skill-${i}`, `Rotates key ${i % 13} of the vault.`, { blob });
  });
  const index = commitIndexOf(skills);
  const read = async (blob: string) => Buffer.from(bodies.get(blob)!);
  return { index, read };
}

/** Everything a search index holds, as plain arrays: two equal indexes rank every query alike. */
const contents = ({ postings, unread, cut }: SearchData) => ({
  terms: digest(postings.terms.joined()),
  arrays: [postings.starts, postings.ids, postings.places, postings.lengths].map(
    (array) => `${array.constructor.name} ${array.length} ${digest(array)}`,
  ),
  unread,
  cut,
});
const digest = (array: ArrayBufferView) =>
  createHash('sha256')
    .update(new Uint8Array(array.buffer, array.byteOffset, array.byteLength))
    .digest('hex');

describe('search file', () => {
  it('reads back exactly the search index it saved, 1-, 2- and 4-byte skill ids alike', async () => {
    const { index, read } = catalogOf(50);
    const narrow = await buildSearchData(searchInputs(index), { read });
    const larger = catalogOf(300);
    const middle = await buildSearchData(searchInputs(larger.index), { read: larger.read });
    // Past 65,536 skills, ids take 4 bytes: two terms a skill, one of them shared by all.
    const builder = new PostingsBuilder();
    for (let id = 0; id < 70_000; id++)
      builder.add(
        id,
        new Map([
          ['vault', PLACE.name],
          [`w${id % 97}`, PLACE.text],
        ]),
      );
    const wide: SearchData = { postings: builder.done(), unread: 3, cut: 0 };
    expect([narrow, middle, wide].map(({ postings }) => postings.ids.BYTES_PER_ELEMENT)).toEqual([1, 2, 4]);
    for (const [data, skills] of [
      [narrow, 50],
      [middle, 300],
      [wide, 70_000],
    ] as const) {
      const back = decodeSearch(encodeSearch(index.commit, 'from', data));
      expect(back?.header).toMatchObject({
        format: SEARCH_FORMAT,
        commit: index.commit,
        skills,
        wide: skills > 0x10000,
      });
      expect(contents(back!.data)).toEqual(contents(data));
    }
  });

  it('refuses a file of at most 256 skills with an id past them, before holding its ids in 1 byte', async () => {
    const { index, read } = catalogOf(50);
    const data = await buildSearchData(searchInputs(index), { read });
    const bytes = encodeSearch(index.commit, 'from', data);
    const { postings } = data;
    // The file: magic, header length, header, then starts (terms + 1), lengths (skills), 2-byte ids, places, terms.
    const startsAt = 8 + bytes.readUInt32LE(4);
    const start = (term: number) => bytes.readUInt32LE(startsAt + term * 4);
    // A term of one skill: its id made 256 past it, which 1 byte would hold as the same skill.
    const lone = Array.from({ length: postings.termCount }, (_, term) => term).find(
      (term) => start(term + 1) - start(term) === 1,
    )!;
    const at = startsAt + (postings.termCount + 1 + postings.skillCount) * 4 + start(lone) * 2;
    const id = bytes.readUInt16LE(at);
    expect(id).toBeLessThan(50);
    bytes.writeUInt16LE(id + 256, at);
    expect(decodeSearch(bytes)).toBeUndefined();
    bytes.writeUInt16LE(id, at);
    expect(contents(decodeSearch(bytes)!.data)).toEqual(contents(data));
  });

  it('refuses a pair whose places are more than the PLACE bits, which an index holds in 4 bits', async () => {
    const { index, read } = catalogOf(50);
    const data = await buildSearchData(searchInputs(index), { read });
    const bytes = encodeSearch(index.commit, 'from', data);
    const { postings } = data;
    const placesAt =
      8 +
      bytes.readUInt32LE(4) +
      (postings.termCount + 1 + postings.skillCount) * 4 +
      postings.ids.length * 2;
    const pairs = postings.ids.length;
    expect([...bytes.subarray(placesAt, placesAt + pairs)].every((bits) => bits >= 1 && bits <= 15)).toBe(
      true,
    );
    const bits = bytes[placesAt + 1]!;
    bytes[placesAt + 1] = 16 | bits;
    expect(decodeSearch(bytes)).toBeUndefined();
    bytes[placesAt + 1] = bits;
    expect(contents(decodeSearch(bytes)!.data)).toEqual(contents(data));
  });

  it('is saved beside the index file, read only for the same index and options, removed with it', async () => {
    const dir = tempDir();
    const store = indexStore(dir);
    const { index, read } = catalogOf(20);
    await store.save(index, OPTIONS);
    const data = await buildSearchData(searchInputs(index), { read });
    await store.saveSearch(index, OPTIONS, data);
    expect(readdirSync(dir).sort()).toEqual([`${index.commit}.json`, `${index.commit}.search`]);
    expect(contents((await store.loadSearch(index, OPTIONS))!)).toEqual(contents(data));
    // Another option, or an index of other skills: not this file's.
    expect(await store.loadSearch(index, { ...OPTIONS, strictNames: true })).toBeUndefined();
    expect(await store.loadSearch({ ...index, skills: index.skills.slice(1) }, OPTIONS)).toBeUndefined();
    // A new index file of the commit takes its search file away first.
    await store.save(index, OPTIONS);
    expect(readdirSync(dir)).toEqual([`${index.commit}.json`]);
    await store.saveSearch(index, OPTIONS, data);
    await store.remove(index.commit);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses a damaged file: cut short, a byte changed, a skill id out of range, or larger than its bound', async () => {
    const dir = tempDir();
    const refused: string[] = [];
    const store = indexStore(dir, (error) => refused.push(`${path.basename(error.file)} ${error.reason}`));
    const { index, read } = catalogOf(20);
    await store.saveSearch(index, OPTIONS, await buildSearchData(searchInputs(index), { read }));
    const file = path.join(dir, `${index.commit}.search`);
    const good = readFileSync(file);
    truncateSync(file, good.length - 1);
    expect(await store.loadSearch(index, OPTIONS)).toBeUndefined();
    // The first skill id of the first term (2-byte ids, after the header and the starts and lengths arrays).
    const header = JSON.parse(good.subarray(8, 8 + good.readUInt32LE(4)).toString()) as { terms: number };
    const firstId = 8 + good.readUInt32LE(4) + (header.terms + 1 + 20) * 4;
    const outOfRange = Buffer.from(good);
    outOfRange.writeUInt16LE(20, firstId);
    writeFileSync(file, outOfRange);
    expect(await store.loadSearch(index, OPTIONS)).toBeUndefined();
    // A header whose `wide` is no boolean (2-byte ids read as such would be a guess).
    const head = JSON.stringify({ ...header, wide: 0 });
    const length = Buffer.alloc(4);
    length.writeUInt32LE(Buffer.byteLength(head));
    const rest = good.subarray(8 + good.readUInt32LE(4));
    writeFileSync(file, Buffer.concat([good.subarray(0, 4), length, Buffer.from(head), rest]));
    expect(await store.loadSearch(index, OPTIONS)).toBeUndefined();
    const magic = Buffer.from(good);
    magic[0] = 0;
    writeFileSync(file, magic);
    expect(await store.loadSearch(index, OPTIONS)).toBeUndefined();
    writeFileSync(file, good);
    expect(await store.loadSearch(index, OPTIONS)).toBeDefined();
    expect(refused).toEqual([]);
    truncateSync(file, maxSearchFileBytes(20) + 1);
    expect(await store.loadSearch(index, OPTIONS)).toBeUndefined();
    // Too large to read: said, like an index file too large.
    expect(refused).toEqual([`${index.commit}.search datadir-file-oversized`]);
  });
});
