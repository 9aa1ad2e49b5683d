import { Client, InMemoryTransport, ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildNamespace, createCatalog } from '../../src/catalog/index.ts';
import { problem } from '../../src/shared/reasons.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';
import { MAX_CURSOR_CHARS } from '../../src/mcp/paging.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { QUOTED_INPUT_CHARS } from '../../src/shared/text.ts';
import { commitIndexOf, oneFileSkill } from '../helpers/catalog.ts';

const COMMIT = 'a'.repeat(40);
/** A bell, an ANSI colour escape and a right-to-left override, as a repository can write them in a description. */
const HOSTILE = 'Rings\u0007 then \u001b[31mred\u001b[0m and \u202Eexe.txt\nsecond line';
const SHOWN = String.raw`Rings\u{0007} then \u{001B}[31mred\u{001B}[0m and \u{202E}exe.txt second line`;

let client: Client;
beforeAll(async () => {
  const index = commitIndexOf(
    [oneFileSkill('bell', HOSTILE, { dir: 'skills/bell' })],
    [problem('skills/\u001b[2Jwipe/SKILL.md', 'name-invalid', 'name "\u202Eevil" must be lowercase', 2)],
  );
  const ns = buildNamespace('hostile', index, { repository: 'local:test' }, async () => new Uint8Array());
  const catalog = createCatalog({ sources: [{ id: 'hostile', current: ns, retained: [] }], failures: [] });
  const factory = createServerFactory({ catalog, logger: silentLogger(), cache: cachePolicy() });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await factory().connect(serverSide);
  client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
});
afterAll(() => client.close());

type ToolResult = { isError?: boolean; content: Array<{ text: string }>; structuredContent?: unknown };

/** How a call fails: the protocol error's code and message, or a tool error's text (code 0). */
async function failure(call: Promise<unknown>): Promise<[number, string]> {
  try {
    const result = (await call) as ToolResult;
    if (result.isError === true) return [0, result.content[0]!.text];
  } catch (error) {
    if (error instanceof ProtocolError) return [error.code, error.message];
    throw error;
  }
  throw new Error('expected the call to fail');
}

const request = (method: string, params: Record<string, unknown>) =>
  client.request({ method, params } as never, z.looseObject({}));
const skillList = (args: Record<string, unknown>) =>
  client.callTool({ name: 'skill_list', arguments: args }) as Promise<ToolResult>;

describe('skill_list shows what would hide or reorder text written out', () => {
  it('in a description, in the text and the structured content, each on one line', async () => {
    const result = await skillList({});
    const { skills, problems } = result.structuredContent as {
      skills: Array<{ description: string }>;
      problems: Array<{ path: string; detail: string }>;
    };
    expect(result.content[0]!.text.split('\n').slice(1)).toEqual([
      `- bell [skills/bell]: ${SHOWN}`,
      '',
      'Not served (1):',
      String.raw`- hostile: skills/\u{001B}[2Jwipe/SKILL.md: name-invalid`,
    ]);
    expect([skills[0]!.description, problems[0]!.path, problems[0]!.detail]).toEqual([
      SHOWN,
      String.raw`skills/\u{001B}[2Jwipe/SKILL.md`,
      String.raw`name "\u{202E}evil" must be lowercase`,
    ]);
  });
});

describe('a cursor', () => {
  it('is at most as long as the longest this server writes (a 4096-byte URI)', () => {
    expect(MAX_CURSOR_CHARS).toBe(5462);
  });

  it('longer than that is refused by the schema, and not echoed', async () => {
    const cursor = 'A'.repeat(100_000);
    const dir = `skill://hostile/${COMMIT}/skills/bell`;
    const bound = `cursor: Too big: expected string to have <=${MAX_CURSOR_CHARS} characters`;
    expect([
      await failure(request('skills/list', { cursor })),
      await failure(request('resources/directory/read', { uri: dir, cursor })),
      await failure(skillList({ cursor })),
    ]).toEqual([
      [-32602, `Invalid params for skills/list: ${bound}`],
      [-32602, `Invalid params for resources/directory/read: ${bound}`],
      [0, `Input validation error: Invalid arguments for tool skill_list: ${bound}`],
    ]);
  });

  it('that is not one this server wrote is quoted whole when short, else by its start and length', async () => {
    const long = `${'A'.repeat(5000)}`;
    expect(QUOTED_INPUT_CHARS).toBe(64);
    expect([
      await failure(request('skills/list', { cursor: long })),
      await failure(skillList({ cursor: 'x\u202Ey' })),
    ]).toEqual([
      [-32602, `invalid cursor "${'A'.repeat(64)}…" (5000 characters)`],
      [0, String.raw`invalid cursor "x\u{202E}y"`],
    ]);
  });
});
