import { ProtocolError, type Client } from '@modelcontextprotocol/client';
import { SkillsClient, SkillVerificationError, type Skill } from '@modelcontextprotocol/client/ext/skills';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { digestOf } from '../../src/index/build.ts';
import { fixture } from '../helpers/fixtures.ts';
import {
  CLI_ARGS,
  connectHttp,
  connectStdio,
  stderrUntil,
  writeConfig,
  type Era,
} from '../helpers/server.ts';
import { connectInProcess, type InProcessServer, serveInProcess } from '../helpers/serving.ts';

const catalog = fixture('catalog');
const root = fixture('root-skill');
const links = fixture('symlinks');
const c1 = catalog.commits['c1']!;
const c2 = catalog.commits['c2']!;
const rootCommit = root.commits['c1']!;
const linksCommit = links.commits['c1']!;

const config = writeConfig({
  pageSize: 3,
  sources: [
    { id: 'catalog', path: catalog.gitdir, commit: c2, paths: ['skills'] },
    { id: 'catalog-v1', path: catalog.gitdir, ref: 'v1', paths: ['skills'] },
    { id: 'root', path: root.gitdir, ref: 'HEAD' },
    { id: 'links', path: links.gitdir, ref: 'main' },
  ],
});

const catalogSkills = (source: string, commit: string, extra: string[]) =>
  [
    'skills/data-pipeline',
    'skills/data-pipeline/stages/validate-rows',
    'skills/git-commit-style',
    'skills/pdf-forms',
    'skills/release-notes',
    'skills/vercel-composition-patterns',
    ...extra,
  ].map((dir) => `skill://${source}/${commit}/${dir}/SKILL.md`);

const EXPECTED_LISTING = [
  ...catalogSkills('catalog', c2, ['skills/changelog-writer']),
  ...catalogSkills('catalog-v1', c1, []),
  `skill://root/${rootCommit}/root-helper/SKILL.md`,
  `skill://links/${linksCommit}/skills/linked/SKILL.md`,
].sort();

const INVALID_PARAMS = -32602;

/** Every file each listed skill serves, relative to its folder: the fixture trees (fixtures-repos/README.md). */
const CATALOG_MANIFESTS: Record<string, string[]> = {
  'skills/data-pipeline': ['SKILL.md', 'stages/validate-rows/SKILL.md', 'stages/validate-rows/rules.md'],
  'skills/data-pipeline/stages/validate-rows': ['SKILL.md', 'rules.md'],
  'skills/git-commit-style': ['SKILL.md'],
  'skills/pdf-forms': ['SKILL.md', 'references/FORMS.md', 'scripts/fill.py'],
  'skills/release-notes': [
    'SKILL.md',
    'assets/logo.png',
    'templates/Q&A%20notes.md',
    'templates/r%C3%A9sum%C3%A9%20%231.md',
  ],
  'skills/vercel-composition-patterns': ['SKILL.md'],
};
const EXPECTED_MANIFESTS: Record<string, string[]> = {
  ...Object.fromEntries(
    Object.entries(CATALOG_MANIFESTS).flatMap(([dir, files]) => [
      [`skill://catalog/${c2}/${dir}/SKILL.md`, files],
      [`skill://catalog-v1/${c1}/${dir}/SKILL.md`, files],
    ]),
  ),
  [`skill://catalog/${c2}/skills/changelog-writer/SKILL.md`]: ['SKILL.md'],
  [`skill://root/${rootCommit}/root-helper/SKILL.md`]: ['SKILL.md', 'references/GUIDE.md'],
  [`skill://links/${linksCommit}/skills/linked/SKILL.md`]: ['SKILL.md', 'alias.md', 'guide.md'],
};

const pageSchema = z.object({
  skills: z.array(z.object({ uri: z.string() }).passthrough()),
  nextCursor: z.string().optional(),
});

async function errorCode(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ProtocolError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected the call to fail');
}

/** Every file of every listed skill read and verified, every folder read and compared with the manifest. */
function behavesAsSpecified(connect: () => Promise<{ client: Client; close(): Promise<void> }>, era: Era) {
  let client: Client;
  let skills: SkillsClient;
  let close: () => Promise<void>;
  let entries: Skill[];

  beforeAll(async () => {
    ({ client, close } = await connect());
    skills = new SkillsClient(client);
    entries = (await skills.list()).skills;
  });
  afterAll(async () => close());

  it('declares the extension with directoryRead', () => {
    expect(skills.supported).toBe(true);
    expect(skills.directoryRead).toBe(true);
  });

  it('lists every served skill of each current commit, across pages', async () => {
    expect(entries.map((entry) => entry.uri).sort()).toEqual(EXPECTED_LISTING);
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await client.request(
        { method: 'skills/list', params: cursor === undefined ? {} : { cursor } },
        pageSchema,
      );
      pages.push(page.skills.map((skill) => skill.uri));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    // pageSize 3: full pages in URI order, each starting where the last one stopped.
    expect(pages.map((page) => page.length)).toEqual(
      Array.from({ length: Math.ceil(EXPECTED_LISTING.length / 3) }, (_, index) =>
        Math.min(3, EXPECTED_LISTING.length - 3 * index),
      ),
    );
    expect(pages.flat()).toEqual(EXPECTED_LISTING);
  });

  it('puts ttlMs and cacheScope on results in the 2026-07-28 era: short for the listing, long for a pin', async () => {
    const listing = await skills.list();
    const got = await skills.get(EXPECTED_LISTING[0]!);
    // Local sources need no credentials and the server has no auth: any cache may share them.
    if (era === 'modern') {
      expect([listing.ttlMs, listing.cacheScope]).toEqual([60_000, 'public']);
      expect([got.ttlMs, got.cacheScope]).toEqual([86_400_000, 'public']);
    } else expect([listing.ttlMs, got.ttlMs]).toEqual([undefined, undefined]);
  });

  it('reads and verifies every file of every skill (size, digest, frontmatter)', async () => {
    const read: Record<string, string[]> = {};
    for (const entry of entries) {
      const root = entry.uri.slice(0, -'SKILL.md'.length);
      for (const resource of entry.resources as Array<{ uri: string; digest: string; size: number }>) {
        const file = await skills.read(entry, resource.uri);
        expect(file.verified).toBe(true);
        expect(file.bytes.byteLength).toBe(resource.size);
        expect(digestOf(file.bytes)).toBe(resource.digest);
        if (resource.uri === entry.uri) expect(file.frontmatter).toEqual(entry.frontmatter);
        (read[entry.uri] ??= []).push(resource.uri.slice(root.length));
      }
    }
    expect(read).toEqual(EXPECTED_MANIFESTS);
  });

  it('serves the binary PNG as a blob and percent-encoded names decode to their files', async () => {
    const entry = entries.find((e) => e.uri === `skill://catalog/${c2}/skills/release-notes/SKILL.md`)!;
    const uris = (entry.resources as Array<{ uri: string }>).map((r) => r.uri);
    expect(uris).toContain(`skill://catalog/${c2}/skills/release-notes/templates/Q&A%20notes.md`);
    expect(uris).toContain(`skill://catalog/${c2}/skills/release-notes/templates/r%C3%A9sum%C3%A9%20%231.md`);
    const png = await skills.read(entry, 'assets/logo.png');
    expect(png.text).toBeUndefined();
    expect(png.mimeType).toBe('image/png');
    expect([...png.bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  });

  it('serves a renamed skill under its name with provenance keeping the real path', async () => {
    const { skill } = await skills.get(`skill://catalog/${c2}/skills/vercel-composition-patterns/SKILL.md`);
    expect(skill._meta).toEqual({
      'dev.skillpin/repository': `local:${catalog.gitdir}`,
      'dev.skillpin/commit': c2,
      'dev.skillpin/path': 'skills/composition-patterns',
      'dev.skillpin/commitTime': '2024-03-08T16:30:00.000Z',
      // The aggregate digest, as examples/skillpin.lock records it (test/e2e/pins.test.ts recomputes it apart).
      'dev.skillpin/digest': 'sha256:71af8c53c06dd406fd446835267af6d19763c7671e25035bf339ce245e1b6d23',
    });
  });

  it("lists the enclosing skill's manifest with its nested skill's files (complete manifests)", async () => {
    const outer = entries.find((e) => e.uri === `skill://catalog/${c2}/skills/data-pipeline/SKILL.md`)!;
    expect((outer.resources as Array<{ uri: string }>).map((r) => r.uri)).toEqual([
      `skill://catalog/${c2}/skills/data-pipeline/SKILL.md`,
      `skill://catalog/${c2}/skills/data-pipeline/stages/validate-rows/SKILL.md`,
      `skill://catalog/${c2}/skills/data-pipeline/stages/validate-rows/rules.md`,
    ]);
  });

  it("serves a symlink inside its skill with its target's bytes and leaves the escaping one out", async () => {
    const entry = entries.find((e) => e.uri === `skill://links/${linksCommit}/skills/linked/SKILL.md`)!;
    const resources = entry.resources as Array<{ uri: string; digest: string }>;
    const byName = new Map(resources.map((r) => [r.uri.slice(r.uri.lastIndexOf('/') + 1), r.digest]));
    expect([...byName.keys()].sort()).toEqual(['SKILL.md', 'alias.md', 'guide.md']);
    expect(byName.get('alias.md')).toBe(byName.get('guide.md'));
  });

  it('answers directory reads that agree with the manifests', async () => {
    for (const entry of entries) {
      const rootUri = entry.uri.slice(0, -'/SKILL.md'.length);
      const found: string[] = [];
      const walk = async (dir: string): Promise<void> => {
        for (const child of (await skills.readDirectory(dir)).resources) {
          if (child.mimeType === 'inode/directory') await walk(child.uri);
          else found.push(child.uri);
        }
      };
      await walk(rootUri);
      expect(found.sort()).toEqual((entry.resources as Array<{ uri: string }>).map((r) => r.uri).sort());
    }
  });

  it('keeps v1 and c2 apart: the same file differs between the two pinned namespaces', async () => {
    const v1 = await skills.get(`skill://catalog-v1/${c1}/skills/pdf-forms/SKILL.md`);
    const v2 = await skills.get(`skill://catalog/${c2}/skills/pdf-forms/SKILL.md`);
    const forms = (skill: Skill) =>
      (skill.resources as Array<{ uri: string; digest: string }>).find((r) =>
        r.uri.endsWith('/references/FORMS.md'),
      )!.digest;
    expect(forms(v1.skill)).not.toBe(forms(v2.skill));
  });

  it('answers -32602 naming the URI for an unknown skill, file, folder and namespace', async () => {
    const base = `skill://catalog/${c2}`;
    const cases: Array<[string, () => Promise<unknown>]> = [
      [`${base}/skills/no-description/SKILL.md`, () => skills.get(`${base}/skills/no-description/SKILL.md`)],
      [
        `${base}/skills/pdf-forms/references/MISSING.md`,
        () => client.readResource({ uri: `${base}/skills/pdf-forms/references/MISSING.md` }),
      ],
      [`${base}/skills/pdf-forms/nope`, () => skills.readDirectory(`${base}/skills/pdf-forms/nope`)],
      [`${base}/skills/pdf-forms/SKILL.md`, () => skills.readDirectory(`${base}/skills/pdf-forms/SKILL.md`)],
      [
        `skill://catalog/${'0'.repeat(40)}/skills/pdf-forms/SKILL.md`,
        () => skills.get(`skill://catalog/${'0'.repeat(40)}/skills/pdf-forms/SKILL.md`),
      ],
      [
        `skill://nowhere/${c2}/skills/pdf-forms/SKILL.md`,
        () => client.readResource({ uri: `skill://nowhere/${c2}/skills/pdf-forms/SKILL.md` }),
      ],
    ];
    for (const [uri, call] of cases) {
      const error = await errorCode(call());
      expect(error.code).toBe(INVALID_PARAMS);
      expect(error.message).toContain(uri);
    }
  });

  it('refuses request URIs that try to leave their namespace or are malformed, with -32602', async () => {
    const base = `skill://catalog/${c2}/skills`;
    const bad = [
      `${base}/pdf-forms/../git-commit-style/SKILL.md`,
      `${base}/pdf-forms/%2e%2e/git-commit-style/SKILL.md`,
      `skill://catalog/${c2}/../../catalog-v1/${c1}/skills/pdf-forms/SKILL.md`,
      `${base}/pdf-forms/SKILL.md%00`,
      `${base}\\pdf-forms\\SKILL.md`,
      `${base}/pdf-forms/SKILL.md?raw=1`,
      `${base}/pdf-forms/SKILL.md#top`,
      'file:///etc/passwd',
      `skill://catalog/${c2.slice(0, 12)}/skills/pdf-forms/SKILL.md`,
    ];
    for (const uri of bad) {
      const error = await errorCode(client.readResource({ uri }));
      expect(error.code, uri).toBe(INVALID_PARAMS);
    }
  });

  it('lets the client catch a tampered digest', async () => {
    const entry = entries.find((e) => e.uri.endsWith('/skills/git-commit-style/SKILL.md'))!;
    const resources = (entry.resources as Array<{ uri: string; digest: string; size: number }>).map((r) => ({
      ...r,
      digest: `sha256:${'0'.repeat(64)}`,
    }));
    const tampered = { ...entry, resources };
    const error = await skills.read(tampered, 'SKILL.md').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SkillVerificationError);
    expect((error as SkillVerificationError).reason).toBe('digest');
  });

  it('lists each listed SKILL.md in resources/list', async () => {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(EXPECTED_LISTING);
    expect(resources.every((r) => r.mimeType === 'text/markdown')).toBe(true);
  });
}

describe.each(['modern', 'legacy'] as const)('one connection, as a stdio host has, %s era', (era) => {
  behavesAsSpecified(() => connectInProcess(config, era), era);
});

// The process and its framing: newline-delimited JSON-RPC on stdin and stdout, logs on stderr only.
describe.each(['modern', 'legacy'] as const)('stdio, a real process, %s era', (era) => {
  it('lists every skill and reads and verifies each SKILL.md', async () => {
    const { client, close } = await connectStdio(config, era);
    try {
      const skills = new SkillsClient(client);
      const entries = (await skills.list()).skills;
      expect(entries.map((entry) => entry.uri).sort()).toEqual(EXPECTED_LISTING);
      const read = await Promise.all(entries.map((entry) => skills.read(entry, 'SKILL.md')));
      expect(read.map((file) => [file.uri, file.verified])).toEqual(
        entries.map((entry) => [entry.uri, true]),
      );
    } finally {
      await close();
    }
  });
});

describe('stdio, a real process whose host is gone', () => {
  it('exits when stdin ends though nobody reads its stderr any more (EPIPE): no log write holds it', async () => {
    const child = spawn(process.execPath, [...CLI_ARGS, 'serve', '--config', config], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    try {
      await stderrUntil(child, (text) => text.includes('"msg":"serving MCP over stdio') || undefined);
      // The host goes: its end of stderr first, then stdin. Every line logged from now on meets EPIPE.
      child.stderr.destroy();
      child.stdin.end();
      const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
      expect([code, signal]).toEqual([0, null]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});

describe('Streamable HTTP', () => {
  let server: InProcessServer;
  beforeAll(async () => {
    server = await serveInProcess(config);
  });
  afterAll(async () => server.stop());
  describe.each(['modern', 'legacy'] as const)('%s era', (era) => {
    behavesAsSpecified(() => connectHttp(server.url, era), era);
  });
});
