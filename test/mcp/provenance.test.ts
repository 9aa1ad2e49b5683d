import { createMcpHandler } from '@modelcontextprotocol/server';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCatalog, type Namespace } from '../../src/catalog/index.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { sourceOver } from '../helpers/source.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';
import { modernRequest } from '../helpers/server.ts';

const catalogRepo = fixture('catalog');
const c2 = catalogRepo.commits['c2']!;
const root = fixture('root-skill');
const r1 = root.commits['c1']!;

const OPEN = `skill://open/${c2}`;
const SOLO = `skill://solo/${r1}`;
const NAMESPACES = 'dev.skillpin/namespaces';

type Meta = Record<string, string>;
interface Entry {
  uri: string;
  _meta?: Meta;
}
interface Page {
  skills: Entry[];
  nextCursor?: string;
  _meta: Record<string, unknown>;
}

let open: Namespace;
let solo: Namespace;
beforeAll(async () => {
  open = await namespaceOf('open', catalogRepo.gitdir, c2, ['skills']);
  solo = await namespaceOf('solo', root.gitdir, r1);
});

const catalogOf = () =>
  createCatalog({
    sources: [open, solo].map((ns) => ({ id: ns.source, current: ns, retained: [] })),
    failures: [],
  });

/** One 2026-07-28 request as the HTTP endpoint serves it: the JSON-RPC result. */
async function call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const handler = createMcpHandler(createServerFactory({ catalog: catalogOf(), logger: silentLogger() }), {
    legacy: 'reject',
  });
  try {
    const body = (await (await handler.fetch(modernRequest(method, params))).json()) as {
      result: Record<string, unknown>;
    };
    return body.result;
  } finally {
    await handler.close();
  }
}

/** The namespace URI of a listed entry: `skill://<source>/<commit>`. */
const namespaceOfUri = (uri: string) => uri.split('/').slice(0, 4).join('/');

describe('provenance (_meta)', () => {
  it("gives each namespace's provenance once in the skills/list result, and each entry only its own", async () => {
    const page = (await call('skills/list')) as unknown as Page;
    expect(page._meta).toEqual({
      [NAMESPACES]: {
        [OPEN]: {
          'dev.skillpin/repository': 'local:test',
          'dev.skillpin/commit': c2,
          'dev.skillpin/commitTime': '2024-03-08T16:30:00.000Z',
        },
        [SOLO]: {
          'dev.skillpin/repository': 'local:test',
          'dev.skillpin/commit': r1,
          'dev.skillpin/commitTime': '2024-02-10T12:00:00.000Z',
        },
      },
      // The SDK's own key, next to ours.
      'io.modelcontextprotocol/serverInfo': { name: 'skillpin', version: '0.1.0' },
    });
    const own = Object.fromEntries(page.skills.map((entry) => [entry.uri, entry._meta]));
    // A path only where the URI names another folder: the renamed skill, and a repository root served by name.
    expect(own[`${OPEN}/skills/vercel-composition-patterns/SKILL.md`]).toEqual({
      'dev.skillpin/path': 'skills/composition-patterns',
      'dev.skillpin/digest': 'sha256:71af8c53c06dd406fd446835267af6d19763c7671e25035bf339ce245e1b6d23',
    });
    expect(Object.keys(own[`${SOLO}/root-helper/SKILL.md`]!)).toEqual([
      'dev.skillpin/path',
      'dev.skillpin/digest',
    ]);
    expect(own[`${SOLO}/root-helper/SKILL.md`]!['dev.skillpin/path']).toBe('.');
    const plain = page.skills.filter(
      (entry) => !entry.uri.endsWith('/vercel-composition-patterns/SKILL.md') && !entry.uri.startsWith(SOLO),
    );
    expect(plain.length).toBe(6);
    for (const entry of plain) expect(Object.keys(entry._meta!)).toEqual(['dev.skillpin/digest']);
  });

  it("makes, with an entry's own, exactly the provenance skills/get carries on that entry", async () => {
    const page = (await call('skills/list')) as unknown as Page;
    const records = page._meta[NAMESPACES] as Record<string, Meta>;
    for (const entry of page.skills) {
      const { skill } = (await call('skills/get', { uri: entry.uri })) as { skill: Entry };
      const namespace = namespaceOfUri(entry.uri);
      const servedPath = entry.uri.slice(namespace.length + 1, -'/SKILL.md'.length);
      expect(skill._meta).toEqual({
        ...records[namespace],
        'dev.skillpin/path': servedPath,
        ...entry._meta,
      });
    }
  });

  it('gives a page the records of the namespaces on it, and no other', async () => {
    const { source } = sourceOver(catalogOf(), 4);
    const first = await source.list({});
    const second = await source.list({ cursor: first.nextCursor! });
    expect(first.skills.map((entry) => namespaceOfUri(entry.uri))).toEqual([OPEN, OPEN, OPEN, OPEN]);
    expect(Object.keys(first._meta[NAMESPACES])).toEqual([OPEN]);
    expect(second.skills.map((entry) => namespaceOfUri(entry.uri))).toEqual([OPEN, OPEN, OPEN, SOLO]);
    expect(Object.keys(second._meta[NAMESPACES])).toEqual([OPEN, SOLO]);
    expect(second.nextCursor).toBeUndefined();
  });
});
