import { createHash, createHmac } from 'node:crypto';
import { cpSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderStatus, statusReport } from '../../src/commands/status.ts';
import { sync } from '../../src/commands/sync.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { createCatalog, type Namespace, type ServedSource } from '../../src/catalog/index.ts';
import { createSyncWorker } from '../../src/sync/worker.ts';
import { loadConfig, type SourceConfig } from '../../src/config/index.ts';
import { problem } from '../../src/shared/reasons.ts';
import { arrangedSources, chooseRefs, refSourceConfig } from '../../src/sync/refGroup.ts';
import { compareRefs, refMatcher, refSourceId } from '../../src/shared/refNames.ts';
import type { StatusReport } from '../../src/shared/status.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { manualClock } from '../helpers/clock.ts';
import { fixture, fixtureFile } from '../helpers/fixtures.ts';
import { git } from '../helpers/git.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { writeConfig } from '../helpers/server.ts';
import { connectInProcess, type InProcessServer, serveInProcess } from '../helpers/serving.ts';
import { tempDir } from '../helpers/temp.ts';

const fx = () => fixture('versions');
const C = (id: 'c1' | 'c2' | 'c3' | 'c4') => fx().commits[id]!;

describe('ref names', () => {
  it('orders versions newest first by their numbers, then other refs by commit time, newest first', () => {
    const refs = [
      { name: 'refs/heads/main', commitTime: '2026-01-01T00:00:00Z' },
      { name: 'refs/tags/v2.9.0' },
      { name: 'refs/heads/release/2026-01', commitTime: '2026-02-01T00:00:00Z' },
      { name: 'refs/tags/v2.10.0' },
      { name: 'refs/tags/v2.10.0-rc.2' },
      { name: 'refs/tags/v2.10.0-rc.10' },
      { name: 'refs/tags/v1' },
      { name: 'refs/tags/1.0.1' },
    ];
    expect([...refs].sort(compareRefs).map((r) => r.name)).toEqual([
      'refs/tags/v2.10.0',
      'refs/tags/v2.10.0-rc.10',
      'refs/tags/v2.10.0-rc.2',
      'refs/tags/v2.9.0',
      'refs/tags/1.0.1',
      'refs/tags/v1',
      'refs/heads/release/2026-01',
      'refs/heads/main',
    ]);
  });

  it('matches short patterns against branch and tag names, full ones against the full name; * stops at /', () => {
    const matches = refMatcher(['v*', 'release/*', 'refs/heads/hotfix-*']);
    expect(
      [
        'refs/tags/v1.0.0',
        'refs/heads/v2',
        'refs/heads/release/2026-01',
        'refs/heads/release/2026/01',
        'refs/heads/hotfix-1',
        'refs/tags/hotfix-1',
        'refs/pull/1/head',
        'refs/tags/x-v1',
      ].filter(matches),
    ).toEqual(['refs/tags/v1.0.0', 'refs/heads/v2', 'refs/heads/release/2026-01', 'refs/heads/hotfix-1']);
  });

  it('serves each ref as <id>.<short name> in URI-safe characters, or refuses one that makes no source id', () => {
    expect(refSourceId('policies', 'refs/tags/v2.1.0')).toBe('policies.v2.1.0');
    expect(refSourceId('policies', 'refs/heads/release/2026-01')).toBe('policies.release-2026-01');
    expect(refSourceId('policies', 'refs/tags/V2_RC+1')).toBe('policies.v2-rc-1');
    expect(refSourceId('policies', 'refs/tags/v1-')).toBeUndefined();
    expect(refSourceId('p', `refs/tags/v${'1'.repeat(61)}`)).toBe(`p.v${'1'.repeat(61)}`);
    expect(refSourceId('p', `refs/tags/v${'1'.repeat(62)}`)).toBeUndefined();
  });
});

describe('choosing the refs of a refs: source', () => {
  const group = (
    maxRefs = 50,
  ): SourceConfig & { target: { kind: 'refs'; patterns: string[]; maxRefs: number } } =>
    ({
      id: 'policies',
      location: { kind: 'local', path: '/nowhere' },
      target: { kind: 'refs', patterns: ['v*'], maxRefs },
      paths: [],
      strictNames: false,
      keep: 2,
      timeoutMs: 1000,
    }) as const;
  const oid = (n: number) => n.toString(16).padStart(40, '0');

  it('refuses both refs that map to one id, and one that takes another source id, naming them', () => {
    const chosen = chooseRefs(
      group(),
      [
        { name: 'refs/tags/v2.1.0-rc_1', oid: oid(1) },
        { name: 'refs/tags/v2.1.0-rc-1', oid: oid(2) },
        { name: 'refs/tags/v3', oid: oid(3) },
        { name: 'refs/tags/v1', oid: oid(4), peeled: oid(5) },
        { name: 'refs/heads/main', oid: oid(6) },
      ],
      new Set(['policies.v3']),
    );
    expect(chosen.refs).toEqual([{ name: 'refs/tags/v1', id: 'policies.v1', commit: oid(5), tag: oid(4) }]);
    const both =
      'refs/tags/v2.1.0-rc-1 and refs/tags/v2.1.0-rc_1 would both be served as policies.v2.1.0-rc-1; neither is served (rename one, or narrow refs:)';
    expect(chosen.problems).toEqual([
      problem('refs/tags/v2.1.0-rc-1', 'ref-id-collision', both),
      problem('refs/tags/v2.1.0-rc_1', 'ref-id-collision', both),
      problem(
        'refs/tags/v3',
        'ref-id-collision',
        'refs/tags/v3 would be served as policies.v3, the id of another configured source; it is not served',
      ),
    ]);
  });

  it('refuses a ref whose id would pass the source-id limit', () => {
    const name = `refs/tags/v${'1'.repeat(60)}`;
    const chosen = chooseRefs(group(), [{ name, oid: oid(1) }], new Set());
    expect(chosen).toEqual({
      refs: [],
      problems: [
        problem(
          name,
          'ref-id-invalid',
          `${name} would be served as a source id of 70 characters, past the limit of 64; it is not served`,
        ),
      ],
    });
  });

  it('past maxRefs serves the newest and names how many were left out', () => {
    const names = ['v2.9.0', 'v2.10.0', 'v1.0.0', 'v2.0.0', 'v0.9.0'];
    const chosen = chooseRefs(
      group(3),
      names.map((name, n) => ({ name: `refs/tags/${name}`, oid: oid(n + 1) })),
      new Set(),
    );
    expect(chosen.refs.map((r) => r.id)).toEqual(['policies.v2.10.0', 'policies.v2.9.0', 'policies.v2.0.0']);
    expect(chosen.problems).toEqual([
      problem(
        'refs/tags/v1.0.0',
        'refs-over-limit',
        '5 refs match, past maxRefs 3: the 2 oldest are not served (refs/tags/v1.0.0, refs/tags/v0.9.0)',
      ),
    ]);
  });
});

describe('which refs are listed', () => {
  const group = (newest?: number): SourceConfig => ({
    id: 'policies',
    location: { kind: 'local', path: '/nowhere' },
    target: { kind: 'refs', patterns: ['*'], maxRefs: 50, ...(newest === undefined ? {} : { newest }) },
    paths: [],
    strictNames: false,
    keep: 2,
    timeoutMs: 1000,
  });
  const refs = [
    ['refs/heads/main', '2026-03-01T00:00:00.000Z'],
    ['refs/tags/v2.9.0', '2025-01-01T00:00:00.000Z'],
    ['refs/heads/release/2026-01', '2026-01-01T00:00:00.000Z'],
    ['refs/tags/v2.10.0', '2024-01-01T00:00:00.000Z'],
    ['refs/tags/v1.0.0', '2023-01-01T00:00:00.000Z'],
  ] as const;
  const arranged = (newest: number | undefined, gone: readonly string[] = []) => {
    const g = group(newest) as Parameters<typeof refSourceConfig>[0];
    const members = refs.map(([name, commitTime], n) => ({
      config: refSourceConfig(g, { name, id: refSourceId('policies', name)!, commit: String(n).repeat(40) }),
      commitTime,
    }));
    const sources = [g, ...members.map((m) => m.config)];
    const served: ServedSource[] = members.map(({ config, commitTime }) => ({
      id: config.id,
      current: { source: config.id, commit: '0'.repeat(40), commitTime } as Namespace,
      retained: [],
    }));
    const listing = {
      refs: [],
      gone: gone.map((name) => ({ name, id: refSourceId('policies', name)!, commit: '0'.repeat(40) })),
      problems: [],
    };
    return arrangedSources(served, sources, new Map([['policies', listing]])).map((s) => [
      s.id,
      s.listed ?? true,
    ]);
  };

  it('lists versions newest first by their numbers, then other refs by commit time; newest N lists the first N', () => {
    expect(arranged(undefined)).toEqual([
      ['policies.v2.10.0', true],
      ['policies.v2.9.0', true],
      ['policies.v1.0.0', true],
      ['policies.main', true],
      ['policies.release-2026-01', true],
    ]);
    expect(arranged(2)).toEqual([
      ['policies.v2.10.0', true],
      ['policies.v2.9.0', true],
      ['policies.v1.0.0', false],
      ['policies.main', false],
      ['policies.release-2026-01', false],
    ]);
  });

  it('never lists a deleted ref it still serves, and lists the next one in its place', () => {
    expect(arranged(1, ['refs/tags/v2.10.0']).slice(0, 2)).toEqual([
      ['policies.v2.10.0', false],
      ['policies.v2.9.0', true],
    ]);
  });
});

describe.each(BACKENDS)('a local repository followed by refs: ($name backend)', ({ name }) => {
  let close: () => Promise<void>;
  let server: InProcessServer;
  let skills: SkillsClient;
  let client: Client;

  beforeAll(async () => {
    const file = writeConfig({
      git: { backend: name },
      sources: [{ id: 'policies', path: fx().gitdir, refs: ['v*', 'release/*'], list: { newest: 2 } }],
    });
    const connected = await connectInProcess(file, 'modern');
    ({ close, server, client } = connected);
    skills = new SkillsClient(client);
  });
  afterAll(() => close());

  it('serves every matching tag and branch as its own namespace, the two newest versions listed', async () => {
    const { skills: listed } = await skills.list();
    expect(listed.map((s) => s.uri)).toEqual([
      `skill://policies.v1.1.0/${C('c2')}/skills/refunds/SKILL.md`,
      `skill://policies.v2.0.0/${C('c3')}/skills/refunds/SKILL.md`,
      `skill://policies.v2.0.0/${C('c3')}/skills/returns/SKILL.md`,
    ]);
  });

  it('serves a ref that is not listed by URI, with the bytes of its commit and the ref in its provenance', async () => {
    for (const [id, commit, tree, ref] of [
      ['v1.0.0', C('c1'), 'c1', 'refs/tags/v1.0.0'],
      ['release-2026-01', C('c4'), 'c4', 'refs/heads/release/2026-01'],
    ] as const) {
      const { skill } = await skills.get(`skill://policies.${id}/${commit}/skills/refunds/SKILL.md`);
      expect(skill._meta).toMatchObject({ 'dev.skillpin/commit': commit, 'dev.skillpin/ref': ref });
      const bytes = fixtureFile('versions', tree, 'skills/refunds/SKILL.md');
      const resource = (skill.resources as Array<{ uri: string; digest: string }>)[0]!;
      expect(resource.digest).toBe(`sha256:${createHash('sha256').update(bytes).digest('hex')}`);
      const read = await skills.read(skill, 'SKILL.md');
      expect(read.verified).toBe(true);
      expect(Buffer.from(read.bytes)).toEqual(bytes);
    }
  });

  it('skill_list and skill_search show the ref beside the source; skill_load takes a ref source by name', async () => {
    type Result = {
      content: Array<{ text: string }>;
      structuredContent?: Record<string, unknown>;
      isError?: boolean;
    };
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as Result;
    const list = await call('skill_list', { source: 'policies.v2.0.0' });
    expect(
      (list.structuredContent!['skills'] as Array<Record<string, unknown>>).map((s) => [
        s['name'],
        s['source'],
        s['ref'],
      ]),
    ).toEqual([
      ['refunds', 'policies.v2.0.0', 'refs/tags/v2.0.0'],
      ['returns', 'policies.v2.0.0', 'refs/tags/v2.0.0'],
    ]);
    expect(list.content[0]!.text.split('\n')[0]).toBe(
      `policies.v2.0.0 (refs/tags/v2.0.0) @ ${C('c3')} (URIs: skill://policies.v2.0.0/${C('c3')}/<path>/SKILL.md):`,
    );
    const search = await call('skill_search', { query: 'refund policy', source: 'policies.v1.0.0' });
    expect(search.structuredContent!['results']).toEqual([
      expect.objectContaining({
        uri: `skill://policies.v1.0.0/${C('c1')}/skills/refunds/SKILL.md`,
        source: 'policies.v1.0.0',
        ref: 'refs/tags/v1.0.0',
        commit: C('c1'),
      }),
    ]);
    expect(search.content[0]!.text).toContain(
      `1. refunds (policies.v1.0.0, refs/tags/v1.0.0) skill://policies.v1.0.0/${C('c1')}/skills/refunds/SKILL.md`,
    );
    // policies.v1.0.0 is served but not listed (list: newest 2): by name and source it still loads.
    const loaded = await call('skill_load', { name: 'refunds', source: 'policies.v1.0.0' });
    expect(loaded.isError ?? false).toBe(false);
    expect(loaded.content[0]!.text.split('\n')[0]).toBe(
      `From skillpin source "policies.v1.0.0" at commit ${C('c1')}: skill://policies.v1.0.0/${C('c1')}/skills/refunds/SKILL.md`,
    );
    const ambiguous = await call('skill_load', { name: 'refunds' });
    expect(ambiguous.isError).toBe(true);
  });

  it('keeps the refs in version order, lists only the newest two, and reports nothing but the collision', () => {
    const state = server.serving.catalog.state;
    expect(state.failures).toEqual([]);
    expect(state.sources.map((s) => [s.id, s.current.commit, s.listed ?? true])).toEqual([
      ['policies.v2.0.0', C('c3'), true],
      ['policies.v1.1.0', C('c2'), true],
      ['policies.v1.0.0', C('c1'), false],
      ['policies.release-2026-01', C('c4'), false],
    ]);
    const logged = server
      .logs()
      .split('\n')
      .filter((line) => line.includes('"ref-id-collision"'))
      .map((line) => JSON.parse(line).ref);
    expect(logged).toEqual(['refs/tags/v2.1.0-rc-1', 'refs/tags/v2.1.0-rc_1']);
  });
});

describe.each(BACKENDS)('a remote followed by refs: over loopback ($name backend)', ({ name }) => {
  let root: string;
  let remote: GitHttpServer;
  let file: string;
  let server: InProcessServer;
  let skills: SkillsClient;
  let close: () => Promise<void>;
  const bare = () => path.join(root, 'policies.git');
  const served = () =>
    server.serving.catalog.state.sources.map((s) => [s.id, s.current.commit, s.listed ?? true]);
  const uri = (id: string, commit: string) => `skill://policies.${id}/${commit}/skills/refunds/SKILL.md`;

  beforeAll(async () => {
    root = tempDir('skillpin-refs-remote-');
    cpSync(fx().gitdir, bare(), { recursive: true });
    remote = await startGitHttpServer({ root });
    file = writeConfig({
      git: { backend: name },
      sources: [
        { id: 'policies', url: remote.urlFor('policies.git'), refs: ['refs/tags/v*'], poll: '1h', keep: 1 },
      ],
    });
    const connected = await connectInProcess(file, 'modern');
    ({ close, server } = connected);
    skills = new SkillsClient(connected.client);
    await server.serving.sync('policies');
  });
  afterAll(async () => {
    await close();
    await remote.close();
  });

  it('serves each matching tag from one listing, annotated tags peeled', () => {
    expect(served()).toEqual([
      ['policies.v2.0.0', C('c3'), true],
      ['policies.v1.1.0', C('c2'), true],
      ['policies.v1.0.0', C('c1'), true],
    ]);
  });

  it('serves a new tag at the next sync, v2.10.0 ordered after v2.9.0', async () => {
    git(['--git-dir', bare(), 'update-ref', 'refs/tags/v2.9.0', C('c3')]);
    git(['--git-dir', bare(), 'update-ref', 'refs/tags/v2.10.0', C('c4')]);
    expect(await server.serving.sync('policies')).toEqual({
      id: 'policies',
      ok: true,
      commit: C('c4'),
      changed: true,
    });
    expect(served()).toEqual([
      ['policies.v2.10.0', C('c4'), true],
      ['policies.v2.9.0', C('c3'), true],
      ['policies.v2.0.0', C('c3'), true],
      ['policies.v1.1.0', C('c2'), true],
      ['policies.v1.0.0', C('c1'), true],
    ]);
    const { skills: listed } = await skills.list();
    expect(listed.map((s) => s.uri)).toContain(uri('v2.10.0', C('c4')));
  });

  it('serves a moved tag at its new commit and keeps the old one readable', async () => {
    git(['--git-dir', bare(), 'update-ref', 'refs/tags/v2.9.0', C('c4')]);
    await server.serving.sync('policies');
    const moved = server.serving.catalog.state.sources.find((s) => s.id === 'policies.v2.9.0')!;
    expect([moved.current.commit, moved.retained.map((ns) => ns.commit)]).toEqual([C('c4'), [C('c3')]]);
    const { skill } = await skills.get(uri('v2.9.0', C('c3')));
    expect((await skills.read(skill, 'SKILL.md')).verified).toBe(true);
  });

  it('takes a deleted tag out of the listing, serves it for keep, then stops', async () => {
    git(['--git-dir', bare(), 'update-ref', '-d', 'refs/tags/v2.10.0']);
    await server.serving.sync('policies');
    expect(served()[0]).toEqual(['policies.v2.10.0', C('c4'), false]);
    expect((await skills.list()).skills.map((s) => s.uri)).not.toContain(uri('v2.10.0', C('c4')));
    expect((await skills.get(uri('v2.10.0', C('c4')))).skill.uri).toBe(uri('v2.10.0', C('c4')));
    // keep: 1 deleted ref stays served: the next deletion replaces it.
    git(['--git-dir', bare(), 'update-ref', '-d', 'refs/tags/v2.9.0']);
    await server.serving.sync('policies');
    expect(served()).toEqual([
      ['policies.v2.9.0', C('c4'), false],
      ['policies.v2.0.0', C('c3'), true],
      ['policies.v1.1.0', C('c2'), true],
      ['policies.v1.0.0', C('c1'), true],
    ]);
    await expect(skills.get(uri('v2.10.0', C('c4')))).rejects.toMatchObject({ code: -32602 });
    // v2.10.0 stopped serving c4, and v2.9.0 serves it still: the store the refs share keeps it pinned.
    const store = path.join(loadConfig(file).dataDir, 'repos', 'policies.git');
    const pins = git(['--git-dir', store, 'for-each-ref', '--format=%(refname)', 'refs/skillpin/pins/']);
    expect(pins.split('\n')).toContain(`refs/skillpin/pins/${C('c4')}`);
  });

  it('serves the same refs after a restart, without the network', async () => {
    const before = served();
    await close();
    await remote.close();
    const connected = await connectInProcess(file, 'modern');
    ({ close, server } = connected);
    skills = new SkillsClient(connected.client);
    expect(served()).toEqual(before);
    expect((await skills.get(uri('v1.1.0', C('c2')))).skill.uri).toBe(uri('v1.1.0', C('c2')));
    // skillpin status reads the same from dataDir alone.
    const report = await statusReport(loadConfig(file));
    expect(report.sources.map((s) => [s.id, s.ref, s.current?.commit ?? null])).toEqual([
      ['policies', null, null],
      ['policies.v2.0.0', 'refs/tags/v2.0.0', C('c3')],
      ['policies.v1.1.0', 'refs/tags/v1.1.0', C('c2')],
      ['policies.v1.0.0', 'refs/tags/v1.0.0', C('c1')],
      ['policies.v2.9.0', 'refs/tags/v2.9.0', C('c4')],
    ]);
    expect(renderStatus(report).split('\n')).toContain(
      'policies  refs refs/tags/v*: serving policies.v2.0.0, policies.v1.1.0, policies.v1.0.0, policies.v2.9.0',
    );
    remote = await startGitHttpServer({ root });
  });
});

describe.each(BACKENDS)(
  'a tag that collides with a served one after sanitising ($name backend)',
  ({ name }) => {
    let root: string;
    let remote: GitHttpServer;
    let server: InProcessServer;
    let close: () => Promise<void>;
    const bare = () => path.join(root, 'policies.git');
    const served = () => server.serving.catalog.state.sources.map((s) => [s.id, s.current.commit]);
    const collisions = () =>
      server
        .logs()
        .split('\n')
        .filter((line) => line.includes('"ref-id-collision"'))
        .map((line) => [JSON.parse(line).ref, JSON.parse(line).msg])
        .sort();

    beforeAll(async () => {
      root = tempDir('skillpin-refs-collide-');
      cpSync(fx().gitdir, bare(), { recursive: true });
      git(['--git-dir', bare(), 'update-ref', '-d', 'refs/tags/v2.1.0-rc_1']);
      remote = await startGitHttpServer({ root });
      const file = writeConfig({
        git: { backend: name },
        sources: [
          { id: 'policies', url: remote.urlFor('policies.git'), refs: ['refs/tags/v*', 'refs/tags/V*'] },
        ],
      });
      ({ close, server } = await connectInProcess(file, 'modern'));
      await server.serving.sync('policies');
    });
    afterAll(async () => {
      await close();
      await remote.close();
    });

    it('keeps v1.0.0 and v2.1.0-rc-1 served when V1.0.0 and v2.1.0-rc_1 are pushed, and refuses the newcomers', async () => {
      expect(served()).toContainEqual(['policies.v1.0.0', C('c1')]);
      expect(served()).toContainEqual(['policies.v2.1.0-rc-1', C('c4')]);
      git(['--git-dir', bare(), 'update-ref', 'refs/tags/V1.0.0', C('c4')]);
      git(['--git-dir', bare(), 'update-ref', 'refs/tags/v2.1.0-rc_1', C('c3')]);
      await server.serving.sync('policies');
      expect(served()).toEqual([
        ['policies.v2.1.0-rc-1', C('c4')],
        ['policies.v2.0.0', C('c3')],
        ['policies.v1.1.0', C('c2')],
        ['policies.v1.0.0', C('c1')],
      ]);
      expect(collisions()).toEqual([
        [
          'refs/tags/V1.0.0',
          'refs/tags/V1.0.0 would be served as policies.v1.0.0, which refs/tags/v1.0.0 is served as already; it is not served (rename it, or narrow refs:)',
        ],
        [
          'refs/tags/v2.1.0-rc_1',
          'refs/tags/v2.1.0-rc_1 would be served as policies.v2.1.0-rc-1, which refs/tags/v2.1.0-rc-1 is served as already; it is not served (rename it, or narrow refs:)',
        ],
      ]);
    });
  },
);

describe('a tag pushed to a refs: source reaches the listing through a webhook', () => {
  const SECRET = 'whsec-refs-7c1d';
  let root: string;
  let remote: GitHttpServer;
  let server: InProcessServer;

  beforeAll(async () => {
    root = tempDir('skillpin-refs-hook-');
    cpSync(fx().gitdir, path.join(root, 'policies.git'), { recursive: true });
    remote = await startGitHttpServer({ root });
    server = await serveInProcess(
      writeConfig({
        webhook: { secret: '${SKILLPIN_WEBHOOK_SECRET}' },
        sources: [{ id: 'policies', url: remote.urlFor('policies.git'), refs: ['v*'], poll: '1h' }],
      }),
      { env: { SKILLPIN_WEBHOOK_SECRET: SECRET } },
    );
    await server.serving.sync('policies');
  });
  afterAll(async () => {
    await server.stop();
    await remote.close();
  });

  it("serves a tag at once on GitHub's create event, and /status shows each ref with its commit", async () => {
    git(['--git-dir', path.join(root, 'policies.git'), 'update-ref', 'refs/tags/v3.0.0', C('c4')]);
    const listed = new Promise<void>((resolve) => {
      const stop = server.serving.catalog.onChange((_, next) => {
        if (!next.sources.some((s) => s.id === 'policies.v3.0.0')) return;
        stop();
        resolve();
      });
    });
    const body = JSON.stringify({
      ref: 'v3.0.0',
      ref_type: 'tag',
      repository: { clone_url: remote.urlFor('policies.git') },
    });
    const response = await fetch(server.url.replace('/mcp', '/hooks/git'), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'create',
        'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
      },
      body,
    });
    expect([response.status, await response.json()]).toEqual([202, { triggered: ['policies'] }]);
    await listed;
    const report = (await (await fetch(server.url.replace('/mcp', '/status'))).json()) as StatusReport;
    expect(report.sources.map((s) => [s.id, s.ref, s.current?.commit ?? null, s.group ?? null])).toEqual([
      ['policies', null, null, null],
      ['policies.v3.0.0', 'refs/tags/v3.0.0', C('c4'), 'policies'],
      ['policies.v2.0.0', 'refs/tags/v2.0.0', C('c3'), 'policies'],
      ['policies.v1.1.0', 'refs/tags/v1.1.0', C('c2'), 'policies'],
      ['policies.v1.0.0', 'refs/tags/v1.0.0', C('c1'), 'policies'],
    ]);
    expect(report.sources[0]!.refs).toEqual({
      patterns: ['v*'],
      served: ['policies.v3.0.0', 'policies.v2.0.0', 'policies.v1.1.0', 'policies.v1.0.0'],
      problems: [
        expect.objectContaining({ path: 'refs/tags/v2.1.0-rc-1', reason: 'ref-id-collision' }),
        expect.objectContaining({ path: 'refs/tags/v2.1.0-rc_1', reason: 'ref-id-collision' }),
      ],
    });
    const page = await (await fetch(server.url.replace('/mcp', '/'))).text();
    expect(page).toContain(
      '<dt>follows</dt><dd>the branches and tags matching <code>v*</code>, each a source of its own: <a href="#source-policies.v3.0.0">policies.v3.0.0</a>, <a href="#source-policies.v2.0.0">policies.v2.0.0</a>',
    );
    expect(page).toContain(
      '<dt>follows</dt><dd><code>refs/tags/v3.0.0</code> of <a href="#source-policies">policies</a></dd>',
    );
    expect(page).toContain('<h3>Refs not served</h3>');
  });
});

describe('reloading a refs: source', () => {
  it('applies a new list: and new patterns on reload; the refs it keeps serve on, neither fetched nor indexed again', async () => {
    const dir = tempDir('skillpin-refs-reload-');
    const file = path.join(dir, 'skillpin.yaml');
    const write = (extra: string) =>
      writeFileSync(
        file,
        `dataDir: ${path.join(dir, 'data')}\nsources:\n  - id: policies\n    path: ${fx().gitdir}\n${extra}`,
      );
    write('    refs: ["v1*"]\n    list: newest\n');
    const server = await serveInProcess(file, { http: false });
    const served = () =>
      server.serving.catalog.state.sources.map((s) => [s.id, s.current.commit, s.listed ?? true]);
    try {
      expect(served()).toEqual([
        ['policies.v1.1.0', C('c2'), true],
        ['policies.v1.0.0', C('c1'), false],
      ]);
      const kept = server.serving.catalog.state.sources[0]!.current;
      write('    refs: ["v1*", "release/*"]\n');
      const outcome = await server.serving.reload();
      expect(outcome).toMatchObject({ applied: true, changes: { changed: ['policies'] } });
      await server.serving.sync('policies');
      expect(served()).toEqual([
        ['policies.v1.1.0', C('c2'), true],
        ['policies.v1.0.0', C('c1'), true],
        ['policies.release-2026-01', C('c4'), true],
      ]);
      // A ref the reload kept was not fetched or indexed again: the same namespace serves.
      expect(server.serving.catalog.state.sources[0]!.current).toBe(kept);
    } finally {
      await server.stop();
    }
  });
});

describe('reloading a refs: source to patterns nothing matches', () => {
  it('stops serving the refs the old patterns listed at its first listing', async () => {
    const dir = tempDir('skillpin-refs-reload-none-');
    const file = path.join(dir, 'skillpin.yaml');
    const write = (refs: string) =>
      writeFileSync(
        file,
        `dataDir: ${path.join(dir, 'data')}\nsources:\n  - id: policies\n    path: ${fx().gitdir}\n    refs: ${refs}\n`,
      );
    write('["v1*"]');
    const server = await serveInProcess(file, { http: false });
    const served = () => server.serving.catalog.state.sources.map((s) => s.id);
    try {
      expect(served()).toEqual(['policies.v1.1.0', 'policies.v1.0.0']);
      write('["x*"]');
      expect(await server.serving.reload()).toMatchObject({
        applied: true,
        changes: { changed: ['policies'] },
      });
      await server.serving.sync('policies');
      expect(served()).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});

describe('skillpin sync of a refs: source', () => {
  it('prints each ref with its commit, and fails when one ref fails', async () => {
    const dir = tempDir('skillpin-refs-sync-');
    const repo = path.join(dir, 'policies.git');
    cpSync(fx().gitdir, repo, { recursive: true });
    // A tag of a tree, not a commit: that ref cannot be served, the others are.
    const tree = git(['--git-dir', repo, 'rev-parse', `${C('c1')}^{tree}`]);
    git(['--git-dir', repo, 'update-ref', 'refs/tags/v9.0.0', tree]);
    const file = path.join(dir, 'skillpin.yaml');
    writeFileSync(
      file,
      `dataDir: ${path.join(dir, 'data')}\nsources:\n  - id: policies\n    path: ${repo}\n    refs: ["v1*", "v9*"]\n`,
    );
    const lines: string[] = [];
    const code = await sync(
      loadConfig(file),
      { interactive: false },
      silentLogger(),
      (text) => void lines.push(text),
    );
    expect(lines.join('').split('\n').filter(Boolean)).toEqual([
      'policies.v9.0.0: indexing',
      'policies.v1.1.0: indexing',
      'policies.v1.0.0: indexing',
      `policies.v9.0.0: FAILED source-commit-not-found: commit ${tree} is not in the repository`,
      `policies.v1.1.0: now at ${C('c2')}`,
      `policies.v1.0.0: now at ${C('c1')}`,
      'policies: FAILED: 1 of 3 refs failed (policies.v9.0.0)',
    ]);
    expect(code).toBe(2);
  });
});

/** A copy of the policies fixture in `dir`, served as a `refs: ["v*"]` source polled hourly: its config file. */
function pollingPolicies(dir: string): { repo: string; file: string } {
  const repo = path.join(dir, 'policies.git');
  cpSync(fx().gitdir, repo, { recursive: true });
  const file = path.join(dir, 'skillpin.yaml');
  writeFileSync(
    file,
    `dataDir: ${path.join(dir, 'data')}\nsources:\n  - id: policies\n    path: ${repo}\n    refs: ["v*"]\n    poll: 1h\n`,
  );
  return { repo, file };
}

describe('a poll of a refs: source with nothing new', () => {
  it("writes state.json at a poll that finds nothing new only once it is a minute old, with that poll's time", async () => {
    const dir = tempDir('skillpin-refs-quiet-');
    const { file } = pollingPolicies(dir);
    const clock = manualClock();
    const worker = createSyncWorker({
      config: loadConfig(file),
      catalog: createCatalog(),
      logger: silentLogger(),
      clock,
    });
    const stateJson = path.join(dir, 'data', 'state.json');
    const saved = () => ({
      ino: statSync(stateJson).ino,
      lastSync: JSON.parse(readFileSync(stateJson, 'utf8')).sources.policies.lastSync,
    });
    try {
      await worker.restore();
      await worker.syncAll('start');
      const started = saved();
      expect(started.lastSync).toBe(new Date(clock.now()).toISOString());
      clock.advance(59_999);
      await worker.syncAll('poll');
      expect(saved()).toEqual(started);
      const live = worker.status().sources.find((s) => s.id === 'policies')!;
      expect(live.lastSync).toBe(new Date(clock.now()).toISOString());
      clock.advance(1);
      await worker.syncAll('poll');
      expect(saved().lastSync).toBe(new Date(clock.now()).toISOString());
      expect(saved().ino).not.toBe(started.ino);
    } finally {
      await worker.stop();
    }
  });

  it('lists the refs once and syncs no ref; a moved tag syncs that ref alone; asked, every ref syncs', async () => {
    const dir = tempDir('skillpin-refs-poll-');
    const { repo, file } = pollingPolicies(dir);
    const synced: string[] = [];
    const worker = createSyncWorker({
      config: loadConfig(file),
      catalog: createCatalog(),
      logger: silentLogger(),
      onSynced: (outcome) => void synced.push(outcome.id),
    });
    try {
      await worker.restore();
      await worker.syncAll('start');
      expect(synced.splice(0).sort()).toEqual([
        'policies',
        'policies.v1.0.0',
        'policies.v1.1.0',
        'policies.v2.0.0',
      ]);
      await worker.syncAll('poll');
      expect(synced.splice(0)).toEqual(['policies']);
      git(['--git-dir', repo, 'update-ref', 'refs/tags/v1.1.0', C('c4')]);
      await worker.syncAll('poll');
      expect(synced.splice(0)).toEqual(['policies', 'policies.v1.1.0']);
      await worker.trigger('policies', 'asked');
      expect(synced.splice(0).sort()).toEqual([
        'policies',
        'policies.v1.0.0',
        'policies.v1.1.0',
        'policies.v2.0.0',
      ]);
    } finally {
      await worker.stop();
    }
  });
});
