import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CALL_BYTES, MAX_ENTRY_BYTES, MAX_FILE_PATHS } from '../../src/mcp/budget.ts';
import { fixture } from '../helpers/fixtures.ts';
import { makeRepo } from '../helpers/repo.ts';
import { writeConfig } from '../helpers/server.ts';
import { connectInProcess } from '../helpers/serving.ts';

const catalog = fixture('catalog');
const c1 = catalog.commits['c1']!;
const c2 = catalog.commits['c2']!;
const MiB = 1024 * 1024;
const big = makeRepo({
  'skills/big-files/SKILL.md':
    '---\nname: big-files\ndescription: Five files over a mebibyte each.\n---\nRead them.\n',
  ...Object.fromEntries(
    Array.from({ length: 5 }, (_, i) => [
      `skills/big-files/data/part-${i}.txt`,
      `${String(i)}é`.repeat(Math.ceil((1.5 * MiB) / 3)),
    ]),
  ),
});

const sha256 = (bytes: Uint8Array) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

type ToolResult = {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
};
type FileEntry = {
  path: string;
  uri?: string;
  size?: number;
  mimeType?: string;
  text?: string;
  base64?: string;
  truncated?: boolean;
  error?: string;
};

describe('tools and prompts for hosts without the skills extension', () => {
  let client: Client;
  let close: () => Promise<void>;
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;

  beforeAll(async () => {
    const config = writeConfig({
      sources: [
        { id: 'catalog', path: catalog.gitdir, commit: c2, paths: ['skills'] },
        { id: 'catalog-v1', path: catalog.gitdir, commit: c1, paths: ['skills'] },
        { id: 'big', path: big.dir, ref: 'HEAD' },
      ],
    });
    ({ client, close } = await connectInProcess(config, 'legacy'));
  });
  afterAll(async () => close());

  it('lists four read-only, idempotent tools with output schemas', async () => {
    const { tools } = await client.listTools();
    expect(
      tools.map((t) => [
        t.name,
        t.annotations?.readOnlyHint,
        t.annotations?.idempotentHint,
        t.outputSchema?.type,
      ]),
    ).toEqual([
      ['skill_list', true, true, 'object'],
      ['skill_search', true, true, 'object'],
      ['skill_load', true, true, 'object'],
      ['skill_file', true, true, 'object'],
    ]);
  });

  it('skill_list gives every listed skill with its origin, and the problems of the served commits', async () => {
    const result = await call('skill_list', {});
    const skills = result.structuredContent!['skills'] as Array<{
      name: string;
      source: string;
      commit: string;
      uri: string;
      files: number;
      bytes: number;
    }>;
    expect(skills.length).toBe(7 + 6 + 1);
    expect(skills.find((s) => s.source === 'catalog' && s.name === 'pdf-forms')).toEqual({
      name: 'pdf-forms',
      description: expect.any(String),
      uri: `skill://catalog/${c2}/skills/pdf-forms/SKILL.md`,
      source: 'catalog',
      commit: c2,
      files: 3,
      bytes: expect.any(Number),
    });
    const problems = result.structuredContent!['problems'] as Array<{ source: string; reason: string }>;
    // Errors first: what is not served, then what is served with a warning.
    expect(problems.filter((p) => p.source === 'catalog').map((p) => p.reason)).toEqual([
      'name-invalid',
      'description-missing',
      'frontmatter-missing',
      'name-mismatch',
    ]);
    const text = result.content[0]!.text!;
    expect(text).toContain(
      `catalog @ ${c2} (URIs: skill://catalog/${c2}/<path>/SKILL.md):\n- changelog-writer [skills/changelog-writer]: `,
    );
    expect(text).toContain('- catalog: skills/Bad_Name/SKILL.md: name-invalid');
    expect(text).toContain('Warnings: name-mismatch ×2');
  });

  it('skill_list filters by source and ranks by a query', async () => {
    const bySource = (await call('skill_list', { source: 'big' })).structuredContent!['skills'] as Array<{
      name: string;
    }>;
    expect(bySource.map((s) => s.name)).toEqual(['big-files']);
    const byQuery = (await call('skill_list', { query: 'PDF forms' })).structuredContent!['skills'] as Array<{
      uri: string;
    }>;
    // Ranked: the two listed commits' pdf-forms, the only skills that mention PDF or forms.
    expect(byQuery.map((s) => s.uri).sort()).toEqual([
      `skill://catalog-v1/${c1}/skills/pdf-forms/SKILL.md`,
      `skill://catalog/${c2}/skills/pdf-forms/SKILL.md`,
    ]);
    const none = await call('skill_list', { query: 'kubernetes autoscaling' });
    expect([(none.structuredContent!['skills'] as unknown[]).length, none.content[0]!.text]).toEqual([
      0,
      expect.stringContaining('No listed skill matches.'),
    ]);
  });

  it('skill_load returns SKILL.md verbatim, the manifest and the origin', async () => {
    const uri = `skill://catalog/${c2}/skills/pdf-forms/SKILL.md`;
    const result = await call('skill_load', { uri });
    const read = await client.readResource({ uri });
    const structured = result.structuredContent as {
      origin: unknown;
      skillMd: string;
      files: Array<{ path: string; size: number; digest: string }>;
    };
    expect(structured.origin).toEqual({ source: 'catalog', commit: c2, uri });
    expect(structured.skillMd).toBe((read.contents[0] as { text: string }).text);
    expect(result.content[1]!.text).toBe(structured.skillMd);
    expect(result.content[0]!.text).toContain(`From skillpin source "catalog" at commit ${c2}: ${uri}`);
    expect(structured.files.map((f) => f.path)).toEqual([
      'SKILL.md',
      'references/FORMS.md',
      'scripts/fill.py',
    ]);
    expect(structured.files[0]!.digest).toBe(sha256(new TextEncoder().encode(structured.skillMd)));
  });

  it('skill_load by a name that several skills share is an error listing every candidate', async () => {
    const result = await call('skill_load', { name: 'pdf-forms' });
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toBe(
      `"pdf-forms" names 2 skills; pass one of these URIs instead:\n- skill://catalog/${c2}/skills/pdf-forms/SKILL.md\n- skill://catalog-v1/${c1}/skills/pdf-forms/SKILL.md`,
    );
    const narrowed = await call('skill_load', { name: 'pdf-forms', source: 'catalog-v1' });
    expect((narrowed.structuredContent as { origin: { commit: string } }).origin.commit).toBe(c1);
  });

  it('skill_load of an unknown skill is an error', async () => {
    expect(await call('skill_load', { name: 'nope' })).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'no listed skill is named "nope"; skill_list shows what is served' }],
    });
    const unknown = await call('skill_load', { uri: `skill://catalog/${c2}/skills/nope/SKILL.md` });
    expect(unknown.isError).toBe(true);
  });

  it('skill_file returns the same bytes resources/read serves, in request order, with per-path errors', async () => {
    const load = (await call('skill_load', { uri: `skill://catalog/${c2}/skills/release-notes/SKILL.md` }))
      .structuredContent as { files: Array<{ path: string; digest: string; size: number }> };
    const digests = new Map(load.files.map((f) => [f.path, f.digest]));
    const result = await call('skill_file', {
      skill: `skill://catalog/${c2}/skills/release-notes/SKILL.md`,
      paths: ['templates/Q&A notes.md', '../pdf-forms/SKILL.md', 'assets/logo.png', 'missing.md', 'SKILL.md'],
    });
    const files = (result.structuredContent as { files: FileEntry[] }).files;
    expect(files.map((f) => f.path)).toEqual([
      'templates/Q&A notes.md',
      '../pdf-forms/SKILL.md',
      'assets/logo.png',
      'missing.md',
      'SKILL.md',
    ]);
    expect(files[1]!.error).toBe('"../pdf-forms/SKILL.md" must not contain ".", ".." or empty segments');
    expect(files[3]!.error).toBe(
      '"missing.md" is not a file of this skill (see skill_load for its manifest)',
    );
    for (const file of [files[0]!, files[2]!, files[4]!]) {
      const bytes =
        file.text !== undefined ? new TextEncoder().encode(file.text) : Buffer.from(file.base64!, 'base64');
      expect(sha256(bytes)).toBe(digests.get(file.path));
      expect(file.truncated).toBeUndefined();
    }
    expect([files[2]!.mimeType, files[2]!.text]).toEqual(['image/png', undefined]);
  });

  it(`refuses more than ${MAX_FILE_PATHS} paths`, async () => {
    const paths = Array.from({ length: MAX_FILE_PATHS + 1 }, () => 'SKILL.md');
    const error = await client
      .callTool({ name: 'skill_file', arguments: { skill: 'git-commit-style', paths } })
      .then(
        (r) => r as ToolResult,
        (e: unknown) => e,
      );
    expect(error).toMatchObject({ isError: true });
    expect((error as ToolResult).content[0]!.text).toContain('paths');
  });

  it(`shares ${MAX_CALL_BYTES} bytes per call and ${MAX_ENTRY_BYTES} per file from the manifest sizes, whatever the order`, async () => {
    expect([MAX_ENTRY_BYTES, MAX_CALL_BYTES]).toEqual([MiB, 4 * MiB]);
    const paths = Array.from({ length: 5 }, (_, i) => `data/part-${i}.txt`);
    const forward = (
      (await call('skill_file', { skill: 'big-files', paths })).structuredContent as { files: FileEntry[] }
    ).files;
    const backward = (
      (await call('skill_file', { skill: 'big-files', paths: [...paths].reverse() })).structuredContent as {
        files: FileEntry[];
      }
    ).files;
    const share = Math.floor((4 * MiB) / 5);
    for (const file of forward) {
      expect(file.truncated).toBe(true);
      expect(file.size).toBe(1.5 * MiB); // "<digit>é" is 3 bytes, repeated 524288 times
      const bytes = new TextEncoder().encode(file.text!).byteLength;
      expect(bytes).toBeLessThanOrEqual(share);
      expect(bytes).toBeGreaterThan(share - 4);
    }
    expect(new Map(backward.map((f) => [f.path, f.text]))).toEqual(
      new Map(forward.map((f) => [f.path, f.text])),
    );
  });

  it('serves one prompt per listed skill with names unique across sources', async () => {
    const { prompts } = await client.listPrompts();
    const names = prompts.map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('changelog-writer');
    expect(names).toContain('catalog/pdf-forms');
    expect(names).toContain('catalog-v1/pdf-forms');
    expect(names).toContain('big-files');
    const prompt = await client.getPrompt({ name: 'catalog/pdf-forms' });
    const uri = `skill://catalog/${c2}/skills/pdf-forms/SKILL.md`;
    expect(prompt.messages[0]!.content).toEqual({
      type: 'text',
      text: `The following are the instructions of the skill "pdf-forms", from skillpin source "catalog" at commit ${c2}: ${uri}`,
    });
    const skillMd = (await client.readResource({ uri })).contents[0] as { text: string };
    const body = skillMd.text.slice(skillMd.text.indexOf('\n---\n') + 5);
    expect(prompt.messages[1]!.content).toEqual({ type: 'text', text: body });
  });
});

describe('the switch', () => {
  it('turns tools and prompts off', async () => {
    const config = writeConfig({
      tools: false,
      prompts: false,
      sources: [{ id: 'catalog', path: catalog.gitdir, commit: c2 }],
    });
    const { client, close } = await connectInProcess(config, 'legacy');
    const capabilities = client.getServerCapabilities();
    expect([capabilities?.tools, capabilities?.prompts]).toEqual([undefined, undefined]);
    expect(capabilities?.resources).toBeDefined();
    await close();
  });
});
