import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCatalog } from '../../src/catalog/index.ts';
import { createMcpEndpoint } from '../../src/http/mcpEndpoint.ts';
import { observeRequests, type RequestOutcome } from '../../src/mcp/observe.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';
import { MODERN } from '../helpers/server.ts';
import { countingServers, handled } from '../helpers/serving.ts';

const catalogRepo = fixture('catalog');
const c2 = catalogRepo.commits['c2']!;

describe('observeRequests', () => {
  it('reports each answered request once, with its method and outcome, and the bytes each read served', async () => {
    const ns = await namespaceOf('cat', catalogRepo.gitdir, c2, ['skills']);
    const catalog = createCatalog({ sources: [{ id: 'cat', current: ns, retained: [] }], failures: [] });
    const reads: Array<[string, number]> = [];
    const seen: Array<[string, RequestOutcome]> = [];
    const factory = observeRequests(
      createServerFactory({
        catalog,
        logger: silentLogger(),
        onRead: (source, bytes) => void reads.push([source, bytes]),
      }),
      (method, outcome, seconds) => {
        expect(seconds).toBeGreaterThanOrEqual(0);
        seen.push([method, outcome]);
      },
    );
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await factory().connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const skills = new SkillsClient(client);
      const { skills: entries } = await skills.list();
      const forms = entries.find((entry) => entry.uri.endsWith('/skills/pdf-forms/SKILL.md'))!;
      const read = await skills.read(forms, 'references/FORMS.md');
      await expect(
        client.readResource({ uri: `skill://cat/${c2}/skills/nothing/SKILL.md` }),
      ).rejects.toThrow();
      await expect(client.request({ method: 'tools/nothing', params: {} }, z.unknown())).rejects.toThrow();
      expect(seen).toEqual([
        ['initialize', 'ok'],
        ['skills/list', 'ok'],
        ['resources/read', 'ok'],
        ['resources/read', 'invalid_params'],
        ['tools/nothing', 'method_not_found'],
      ]);
      expect(reads).toEqual([['cat', read.bytes.byteLength]]);
    } finally {
      await client.close();
    }
  });

  it('reports a skills/list or skill_search answered with no server made as it reports one a server answers', async () => {
    const ns = await namespaceOf('cat', catalogRepo.gitdir, c2, ['skills']);
    const catalog = createCatalog({ sources: [{ id: 'cat', current: ns, retained: [] }], failures: [] });
    const seen: Array<[string, RequestOutcome]> = [];
    const base = createServerFactory({ catalog, logger: silentLogger() });
    const counting = countingServers(base);
    const factory = observeRequests(counting.factory, (method, outcome) => void seen.push([method, outcome]));
    const endpoint = createMcpEndpoint({ factory, logger: silentLogger() });
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const post = (method: string, params: Record<string, unknown>, name?: string) =>
      handled(
        endpoint,
        new Request('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-method': method,
            'mcp-protocol-version': MODERN,
            ...(name === undefined ? {} : { 'mcp-name': name }),
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope } }),
        }),
        '127.0.0.1',
      );
    const list = (params: Record<string, unknown>) => post('skills/list', params);
    const search = (params: Record<string, unknown>) => post('tools/call', params, 'skill_search');
    try {
      const fromText = await list({});
      expect(((await fromText.json()) as { result: { skills: unknown[] } }).result.skills).toHaveLength(7);
      expect([counting.made(), seen]).toEqual([0, [['skills/list', 'ok']]]);
      // A param the page text does not take: a server answers, and reports it.
      const fromServer = await list({ extra: true });
      expect(((await fromServer.json()) as { result: { skills: unknown[] } }).result.skills).toHaveLength(7);
      expect([counting.made(), seen]).toEqual([
        1,
        [
          ['skills/list', 'ok'],
          ['skills/list', 'ok'],
        ],
      ]);
      const total = async (response: Response) =>
        ((await response.json()) as { result: { structuredContent: { total: number } } }).result
          .structuredContent.total;
      seen.length = 0;
      expect(await total(await search({ name: 'skill_search', arguments: { query: 'pdf forms' } }))).toBe(1);
      expect([counting.made(), seen]).toEqual([1, [['tools/call', 'ok']]]);
      // A param the call does not take: a server answers, and reports it.
      const served = await search({ name: 'skill_search', arguments: { query: 'pdf forms' }, extra: 1 });
      expect(await total(served)).toBe(1);
      expect([counting.made(), seen]).toEqual([
        2,
        [
          ['tools/call', 'ok'],
          ['tools/call', 'ok'],
        ],
      ]);
    } finally {
      await endpoint.close();
    }
  });
});
