import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { DIRECTORY_MIME_TYPE, type Skill, SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCatalog, type Namespace } from '../../src/catalog/index.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';

/** Every fixture repository at every commit it has, each a source of its own. */
const SOURCES: Array<[string, string, string]> = [
  ['catalog-c1', 'catalog', 'c1'],
  ['catalog-c2', 'catalog', 'c2'],
  ['adversarial', 'adversarial', 'c1'],
  ['root-skill', 'root-skill', 'c1'],
  ['symlinks', 'symlinks', 'c1'],
];

/**
 * What a host does with everything skillpin lists, with the SDK client's own checks: SkillsClient refuses an
 * entry whose frontmatter, name, URI or manifest breaks its rules, and verifies every file it reads (size,
 * digest, and for SKILL.md the frontmatter, re-read with the SDK's reader). Nothing listed may fail either.
 */
describe("the MCP SDK client's checks over every listed entry of every fixture", () => {
  let client: Client;
  let skills: SkillsClient;
  let namespaces: Namespace[];
  beforeAll(async () => {
    namespaces = await Promise.all(
      SOURCES.map(([id, name, commit]) => {
        const built = fixture(name);
        return namespaceOf(id, built.gitdir, built.commits[commit]!);
      }),
    );
    const catalog = createCatalog({
      sources: namespaces.map((ns) => ({ id: ns.source, current: ns, retained: [] })),
      failures: [],
    });
    const factory = createServerFactory({
      catalog,
      logger: silentLogger(),
      cache: cachePolicy({ listTtlMs: 1000, pinnedTtlMs: 1000 }),
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await factory().connect(serverSide);
    client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(clientSide);
    skills = new SkillsClient(client, { skipInvalid: true });
  });

  it('lists no entry the client refuses', async () => {
    const { skills: entries, invalid } = await skills.list();
    expect(invalid).toEqual([]);
    expect(entries.length).toBe(namespaces.reduce((sum, ns) => sum + ns.skills.length, 0));
  });

  it('serves every file of every entry so that it verifies, SKILL.md frontmatter included', async () => {
    const { skills: entries } = await skills.list();
    const failures: string[] = [];
    let files = 0;
    for (const entry of entries)
      for (const resource of entry.resources as Exclude<Skill['resources'], 'dynamic'>) {
        files++;
        await skills
          .read(entry, resource.uri)
          .catch((error: Error) => failures.push(`${resource.uri}: ${error.message}`));
      }
    expect(failures).toEqual([]);
    expect(files).toBe(
      namespaces.reduce((sum, ns) => sum + ns.skills.reduce((n, s) => n + s.files.length, 0), 0),
    );
  });

  it('answers every directory read of every skill with entries the client accepts', async () => {
    const { skills: entries } = await skills.list();
    const failures: string[] = [];
    const walk = async (uri: string): Promise<void> => {
      const { resources } = await skills.readDirectory(uri);
      for (const child of resources) {
        if (typeof child.mimeType !== 'string')
          failures.push(`${child.uri}: mimeType ${JSON.stringify(child.mimeType)}`);
        if (child.mimeType === DIRECTORY_MIME_TYPE) await walk(child.uri);
      }
    };
    for (const entry of entries)
      await walk(entry.uri.slice(0, -'/SKILL.md'.length)).catch((error: Error) =>
        failures.push(`${entry.uri}: ${error.message}`),
      );
    expect(failures).toEqual([]);
  });
});
