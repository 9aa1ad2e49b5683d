import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import {
  createCatalog,
  type Catalog,
  type CatalogState,
  EVERY_SOURCE,
  type Namespace,
} from '../../src/catalog/index.ts';
import { digestOf } from '../../src/index/index.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { createServingOwner } from '../../src/mcp/serving.ts';
import { buildSnapshot } from '../../src/mcp/snapshot.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';
import { modernRequest } from '../helpers/server.ts';

const catalogRepo = fixture('catalog');
const c1 = catalogRepo.commits['c1']!;
const c2 = catalogRepo.commits['c2']!;

const stateOf = (...namespaces: Namespace[]): CatalogState => ({
  sources: namespaces.map((ns) => ({ id: ns.source, current: ns, retained: [] })),
  failures: [],
});

/** A 2025-11-25 client of a stdio-style server from the factory, in memory. */
async function connect(catalog: Catalog) {
  const factory = createServerFactory({ catalog, logger: silentLogger() });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await factory().connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

describe('the serving snapshot', () => {
  it('is built once per namespace and kept across swaps that keep the namespace', async () => {
    const v1 = await namespaceOf('cat', catalogRepo.gitdir, c1, ['skills']);
    const v2 = await namespaceOf('other', catalogRepo.gitdir, c2, ['skills']);
    const catalog = createCatalog(stateOf(v1));
    const owner = createServingOwner(catalog);
    const first = owner.at(EVERY_SOURCE);
    expect(owner.at(EVERY_SOURCE)).toBe(first);
    const snapshot = first.snapshot(v1);
    const page = first.listing(undefined);
    catalog.swap(stateOf(v1, v2));
    const second = owner.at(EVERY_SOURCE);
    expect(second).not.toBe(first);
    expect(second.snapshot(v1)).toBe(snapshot);
    expect(second.listing(undefined)).not.toEqual(page);
    // A request that began before the swap finishes on the state it began with.
    expect(first.listing(undefined)).toEqual(page);
    expect(second.listed.filter((served) => served.ns === v1)).toEqual([...snapshot.ordered]);
  });

  it('keeps the listing (view and page texts) across a swap that lists the same namespaces, and only then', async () => {
    const v1 = await namespaceOf('cat', catalogRepo.gitdir, c1, ['skills']);
    const v2 = await namespaceOf('other', catalogRepo.gitdir, c2, ['skills']);
    const catalog = createCatalog(stateOf(v1, v2));
    const owner = createServingOwner(catalog);
    const first = owner.at(EVERY_SOURCE);
    const [listed, page, text] = [first.listed, first.listing(undefined), first.listingText(undefined)];
    // A sync that found nothing new swaps a new state listing the same namespaces (a failure may come or go).
    catalog.swap({
      ...stateOf(v1, v2),
      failures: [{ id: 'gone', reason: 'source-fetch-failed', detail: 'x' }],
    });
    const second = owner.at(EVERY_SOURCE);
    expect(second).not.toBe(first);
    expect([second.listed, second.listing(undefined)]).toEqual([listed, page]);
    expect(second.listed).toBe(listed);
    // A page is cut again at each request; its text is written once.
    expect(second.listing(undefined)).not.toBe(page);
    expect(second.listingText(undefined)).toBe(text);
    expect(second.state.failures.map((f) => f.id)).toEqual(['gone']);
    // Another order is another listing.
    catalog.swap(stateOf(v2, v1));
    expect(owner.at(EVERY_SOURCE).listed).not.toBe(listed);
    expect(owner.at(EVERY_SOURCE).listed.map((served) => served.uri)).toEqual(
      listed.map((served) => served.uri),
    );
  });

  it("writes each page's text as the JSON of the page, byte for byte, every page of the listing", async () => {
    const v1 = await namespaceOf('cat', catalogRepo.gitdir, c1, ['skills']);
    const v2 = await namespaceOf('other', catalogRepo.gitdir, c2, ['skills']);
    const owner = createServingOwner(createCatalog(stateOf(v1, v2)), { pageSize: 2 });
    const state = owner.at(EVERY_SOURCE);
    let cursor: string | undefined;
    let pages = 0;
    do {
      const { _meta, ...page } = state.listing(cursor);
      const text = state.listingText(cursor);
      expect(text.entries.toString()).toBe(JSON.stringify(page).slice(1, -1));
      expect(text.meta.toString()).toBe(JSON.stringify(_meta).slice(1, -1));
      expect(text.nextCursor).toBe(page.nextCursor);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(Math.ceil(state.listed.length / 2));
    expect(pages).toBeGreaterThan(2);
  });

  it('keys entries, files and folders by canonical URI, folders listing their children in URI order', async () => {
    const ns = await namespaceOf('cat', catalogRepo.gitdir, c2, ['skills']);
    const snapshot = buildSnapshot(ns);
    const base = `skill://cat/${c2}/skills/release-notes`;
    expect(snapshot.skills.get(`${base}/SKILL.md`)?.skill.dir).toBe('skills/release-notes');
    const notes = snapshot.fileAt('skills/release-notes/templates/Q&A notes.md');
    expect([notes?.uri, notes?.file.path]).toEqual([
      `${base}/templates/Q&A%20notes.md`,
      'skills/release-notes/templates/Q&A notes.md',
    ]);
    // A path that is a folder, a file of no skill, the namespace's root: no file.
    for (const path of ['skills/release-notes/templates', 'skills/README.md', ''])
      expect(snapshot.fileAt(path)).toBeUndefined();
    expect(snapshot.dirs.get(`${base}/templates`)?.map((child) => child.uri)).toEqual([
      `${base}/templates/Q&A%20notes.md`,
      `${base}/templates/r%C3%A9sum%C3%A9%20%231.md`,
    ]);
    expect(snapshot.dirs.get(base)?.map((child) => [child.name, child.mimeType])).toEqual([
      ['SKILL.md', 'text/markdown'],
      ['assets', 'inode/directory'],
      ['templates', 'inode/directory'],
    ]);
    expect(snapshot.ordered.map((served) => served.uri)).toEqual(
      [...snapshot.ordered.map((served) => served.uri)].sort(),
    );
  });

  it('hands out frozen entries, so no request can change what the next one is served', async () => {
    const ns = await namespaceOf('cat', catalogRepo.gitdir, c2, ['skills']);
    const entry = buildSnapshot(ns).ordered[0]!.entry;
    expect(Object.isFrozen(entry)).toBe(true);
    expect(Object.isFrozen(entry.resources)).toBe(true);
    expect(() => {
      (entry.frontmatter as Record<string, unknown>)['name'] = 'changed';
    }).toThrow(TypeError);
  });
});

describe('names git allows and skills cannot serve', () => {
  it('serves the skill without them, reports each, and the SDK client accepts the entry', async () => {
    const adversarial = fixture('adversarial');
    const commit = adversarial.commits['c1']!;
    const ns = await namespaceOf('adv', adversarial.gitdir, commit, ['skills']);
    expect(
      ns.problems
        .filter((p) => p.path.startsWith('skills/dot-names/') || p.path.startsWith('skills/.git/'))
        .map((p) => [p.path, p.reason]),
    ).toEqual([
      ['skills/.git/hidden/SKILL.md', 'skill-path-invalid'],
      ['skills/dot-names/.', 'file-name-invalid'],
      ['skills/dot-names/..', 'file-name-invalid'],
      ['skills/dot-names/.git', 'file-name-invalid'],
      ['skills/dot-names/nested/.git/config', 'file-name-invalid'],
    ]);
    const client = await connect(createCatalog(stateOf(ns)));
    const skills = new SkillsClient(client);
    const base = `skill://adv/${commit}/skills/dot-names`;
    const { skill: entry } = await skills.get(`${base}/SKILL.md`);
    expect((entry.resources as Array<{ uri: string }>).map((r) => r.uri)).toEqual([`${base}/SKILL.md`]);
    const read = await skills.read(entry, 'SKILL.md');
    expect([read.verified, digestOf(read.bytes)]).toEqual([
      true,
      // fixtures-repos/adversarial/repo.yaml declares these bytes (a raw entry).
      digestOf(
        new TextEncoder().encode(
          '---\nname: dot-names\ndescription: Beside names no URI or checkout holds.\n---\n',
        ),
      ),
    ]);
    await client.close();
  });
});

describe('the server made for each HTTP request', () => {
  const post = modernRequest;

  it('registers what its method needs, subscribes to nothing, and is collected after its exchange', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const ns = await namespaceOf('cat', catalogRepo.gitdir, c2, ['skills']);
    const catalog = createCatalog(stateOf(ns));
    let subscriptions = 0;
    const onChange = catalog.onChange.bind(catalog);
    catalog.onChange = (listener) => {
      subscriptions++;
      return onChange(listener);
    };
    const factory = createServerFactory({ catalog, logger: silentLogger() });
    const made: Array<WeakRef<object>> = [];
    const capabilities: Array<Record<string, unknown>> = [];
    const handler = createMcpHandler(
      (context) => {
        const mcp = factory(context);
        made.push(new WeakRef(mcp));
        capabilities.push({ ...mcp.server.getCapabilities() });
        return mcp;
      },
      { legacy: 'reject' },
    );
    const uri = `skill://cat/${c2}/skills/pdf-forms/SKILL.md`;
    for (let i = 0; i < 50; i++) {
      const listing = (await (await handler.fetch(post('skills/list', {}))).json()) as {
        result: { skills: unknown[] };
      };
      expect(listing.result.skills.length).toBe(7);
      const read = (await (await handler.fetch(post('resources/read', { uri }))).json()) as {
        result: { contents: Array<{ uri: string }> };
      };
      expect(read.result.contents[0]!.uri).toBe(uri);
    }
    const tools = (await (await handler.fetch(post('tools/list', {}))).json()) as {
      result: { tools: Array<{ name: string }> };
    };
    expect(tools.result.tools.map((tool) => tool.name)).toEqual([
      'skill_list',
      'skill_search',
      'skill_load',
      'skill_file',
    ]);
    expect(Object.keys(capabilities[0]!).sort()).toEqual(['extensions', 'resources']);
    expect(Object.keys(capabilities.at(-1)!).sort()).toEqual(['resources', 'tools']);
    expect(subscriptions).toBe(0);
    await handler.close();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(made.length).toBe(101);
    expect(made.filter((ref) => ref.deref() !== undefined).length).toBe(0);
  });

  it('a connection (stdio) is told when the listing changes, and stops listening when it closes', async () => {
    const v1 = await namespaceOf('cat', catalogRepo.gitdir, c1, ['skills']);
    const v2 = await namespaceOf('cat', catalogRepo.gitdir, c2, ['skills']);
    const catalog = createCatalog(stateOf(v1));
    const client = await connect(catalog);
    const changed = new Promise<string>((resolve) =>
      client.setNotificationHandler('notifications/resources/list_changed', () => resolve('resources')),
    );
    catalog.swap(stateOf(v2));
    expect(await changed).toBe('resources');
    await client.close();
  });
});
