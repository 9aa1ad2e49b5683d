import { ProtocolError } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { createCatalog, type Namespace } from '../../src/catalog/index.ts';
import { encodeCursor } from '../../src/mcp/paging.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';
import { sourceOver } from '../helpers/source.ts';

const catalogRepo = fixture('catalog');
const ctx = {} as never;

async function sourceWith(...namespaces: Namespace[]) {
  const catalog = createCatalog({
    sources: namespaces.map((ns) => ({ id: ns.source, current: ns, retained: [] })),
    failures: [],
  });
  return { catalog, ...sourceOver(catalog, 2) };
}

async function walk(source: Awaited<ReturnType<typeof sourceWith>>['source']): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await source.list(cursor === undefined ? {} : { cursor }, ctx);
    pages.push(page.skills.map((s) => s.uri.split('/').slice(4).join('/')));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return pages;
}

describe('catalogSkillSource', () => {
  it('pages the listing in URI order with cursors', async () => {
    const { source } = await sourceWith(
      await namespaceOf('cat', catalogRepo.gitdir, catalogRepo.commits['c1']!, ['skills']),
    );
    expect(await walk(source)).toEqual([
      ['skills/data-pipeline/SKILL.md', 'skills/data-pipeline/stages/validate-rows/SKILL.md'],
      ['skills/git-commit-style/SKILL.md', 'skills/pdf-forms/SKILL.md'],
      ['skills/release-notes/SKILL.md', 'skills/vercel-composition-patterns/SKILL.md'],
    ]);
  });

  it('keeps a cursor meaningful after the catalog is swapped', async () => {
    const v1 = await namespaceOf('cat', catalogRepo.gitdir, catalogRepo.commits['c1']!, ['skills']);
    const { catalog, source } = await sourceWith(v1);
    const first = await source.list({}, ctx);
    const other = await namespaceOf('other', catalogRepo.gitdir, catalogRepo.commits['c1']!, ['skills']);
    catalog.swap({
      sources: [
        { id: 'cat', current: v1, retained: [] },
        { id: 'other', current: other, retained: [] },
      ],
      failures: [],
    });
    const second = await source.list({ cursor: first.nextCursor! }, ctx);
    expect(second.skills.map((s) => s.uri.split('/').slice(4).join('/'))).toEqual([
      'skills/git-commit-style/SKILL.md',
      'skills/pdf-forms/SKILL.md',
    ]);
  });

  it("serves a view's pages as frozen objects cut alike at each request, a cursor off them a page of its own", async () => {
    const { source } = await sourceWith(
      await namespaceOf('cat', catalogRepo.gitdir, catalogRepo.commits['c1']!, ['skills']),
    );
    const first = await source.list({}, ctx);
    const second = await source.list({ cursor: first.nextCursor! }, ctx);
    expect(await source.list({}, ctx)).toEqual(first);
    expect(await source.list({ cursor: first.nextCursor! }, ctx)).toEqual(second);
    expect([Object.isFrozen(first), Object.isFrozen(first.skills), Object.isFrozen(first._meta)]).toEqual([
      true,
      true,
      true,
    ]);
    const off = encodeCursor(first.skills[0]!.uri);
    const shifted = await source.list({ cursor: off }, ctx);
    expect(shifted.skills.map((s) => s.uri)).toEqual([first.skills[1]!.uri, second.skills[0]!.uri]);
    expect(await source.list({ cursor: off }, ctx)).toEqual(shifted);
  });

  it('refuses a forged cursor with -32602', async () => {
    const { source } = await sourceWith(
      await namespaceOf('cat', catalogRepo.gitdir, catalogRepo.commits['c1']!, ['skills']),
    );
    const error = await source.list({ cursor: 'not-a-cursor!' }, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(-32602);
  });

  it('answers a directory read of every folder of a skill, root included', async () => {
    const ns = await namespaceOf('cat', catalogRepo.gitdir, catalogRepo.commits['c2']!, ['skills']);
    const { source } = await sourceWith(ns);
    const base = `skill://cat/${ns.commit}/skills/release-notes`;
    const root = await source.readDirectory!(base, {}, ctx);
    expect(root?.resources.map((r) => [r.name, r.mimeType])).toEqual([
      ['SKILL.md', 'text/markdown'],
      ['assets', 'inode/directory'],
    ]);
    const page2 = await source.readDirectory!(base, { cursor: root!.nextCursor! }, ctx);
    expect(page2?.resources.map((r) => [r.name, r.mimeType])).toEqual([['templates', 'inode/directory']]);
  });
});
