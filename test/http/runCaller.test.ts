import path from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog } from '../../src/catalog/index.ts';
import { defaultRunSettings } from '../../src/config/index.ts';
import { createAuthGate } from '../../src/http/auth/gate.ts';
import { MCP_PATH, type RunningHttpServer, startHttpServer } from '../../src/http/server.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';
import { createServerFactory, type ServerFactory } from '../../src/mcp/server.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { MODERN } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp.ts';
import { c1, SOURCE, scripts, skillUri, stateOf, type ToolResult } from '../run/harness.ts';

const TOKENS = { alice: 'alice-token-0123456789abcdef', bob: 'bob-token-0123456789abcdef' };
const ARGS = { uri: skillUri('skills/bounds'), script: 'scripts/argv.js', args: ['one'] };

/** One 2026-07-28 skill_run call POSTed to `url` (as `token`'s principal when given); its tool result. */
async function run(url: string, args: Record<string, unknown>, token?: string): Promise<ToolResult> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-method': 'tools/call',
      'mcp-name': 'skill_run',
      'mcp-protocol-version': MODERN,
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'skill_run',
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const body = (await response.json()) as { result?: ToolResult };
  if (body.result === undefined) throw new Error(JSON.stringify(body));
  return body.result;
}

const outcome = (result: ToolResult) => [
  result.structuredContent!['status'],
  result.structuredContent!['code'],
];

describe('a skill_run confirmation is bound to the caller it was issued to', () => {
  let factory: ServerFactory;
  let authed: RunningHttpServer;
  let open: RunningHttpServer;
  let stdio: Client;

  beforeAll(async () => {
    const catalog = createCatalog(stateOf(await namespaceOf(SOURCE, scripts.gitdir, c1)));
    const logger = silentLogger();
    factory = createServerFactory({
      catalog,
      logger,
      cache: cachePolicy(),
      run: {
        grants: new Map([[SOURCE, [{ skill: 'skills/bounds', script: 'scripts/argv.js', env: [] }]]]),
        settings: defaultRunSettings(),
        dir: path.join(tempDir('skillpin-run-caller-'), 'run'),
        environ: { state: 'scrubbed' },
        identity: { state: 'same' },
      },
    });
    const serving = { factory, catalog, status: () => ({ version: 2 as const, sources: [], failures: [] }) };
    const listen = { host: '127.0.0.1', port: 0 };
    authed = await startHttpServer({
      listen,
      serving,
      logger,
      auth: createAuthGate(
        { tokens: Object.entries(TOKENS).map(([name, token]) => ({ name, token })) },
        { logger, mcpPath: MCP_PATH },
      ),
    });
    open = await startHttpServer({ listen, serving, logger });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await factory().connect(serverSide);
    stdio = new Client({ name: 'skillpin-test', version: '1.0.0' });
    await stdio.connect(clientSide);
  });
  afterAll(async () => {
    await stdio.close();
    await authed.close();
    await open.close();
  });

  it("refuses alice's token to bob (run-token-other-caller), and it stays good for alice", async () => {
    const preview = await run(authed.url, ARGS, TOKENS.alice);
    const confirmToken = preview.structuredContent!['confirmToken'];
    const bob = await run(authed.url, { ...ARGS, confirmToken }, TOKENS.bob);
    expect(bob.structuredContent).toEqual({
      status: 'refused',
      origin: { source: SOURCE, commit: c1, uri: ARGS.uri },
      code: 'run-token-other-caller',
      detail: 'the confirmToken was issued to another caller; nothing ran, ask for a preview of your own',
    });
    expect(outcome(await run(authed.url, { ...ARGS, confirmToken }, TOKENS.alice))).toEqual([
      'ran',
      undefined,
    ]);
  });

  it('refuses a token issued over stdio to an HTTP caller, and one issued over HTTP to stdio', async () => {
    const overStdio = (await stdio.callTool({ name: 'skill_run', arguments: ARGS })) as ToolResult;
    const overHttp = await run(open.url, ARGS);
    const redeemed = await run(open.url, {
      ...ARGS,
      confirmToken: overStdio.structuredContent!['confirmToken'],
    });
    const back = (await stdio.callTool({
      name: 'skill_run',
      arguments: { ...ARGS, confirmToken: overHttp.structuredContent!['confirmToken'] },
    })) as ToolResult;
    expect([outcome(redeemed), outcome(back)]).toEqual([
      ['refused', 'run-token-other-caller'],
      ['refused', 'run-token-other-caller'],
    ]);
  });
});
