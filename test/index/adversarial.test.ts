import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createCatalog, type Namespace } from '../../src/catalog/index.ts';
import { digestOf } from '../../src/index/index.ts';
import { buildSnapshot } from '../../src/mcp/snapshot.ts';
import { sourceOver } from '../helpers/source.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture, fixtureFile, PROJECT_ROOT } from '../helpers/fixtures.ts';

const adversarial = fixture('adversarial');
const commit = adversarial.commits['c1']!;

/** Every case of fixtures-repos/adversarial: the path reported and its reason (README table there). */
const EXPECTED_PROBLEMS: Array<[string, string]> = [
  ['skills/-leading/SKILL.md', 'name-invalid'],
  ['skills/.git/hidden/SKILL.md', 'skill-path-invalid'],
  ['skills/<img src=x onerror=alert(1)>/SKILL.md', 'name-invalid'],
  ['skills/bad-file-names/back\\slash.md', 'file-name-invalid'],
  ['skills/bad-file-names/ctl\u0001.md', 'file-name-invalid'],
  ['skills/bad-file-names/\uFFFD.md', 'file-name-invalid'],
  ['skills/billion-laughs/SKILL.md', 'frontmatter-invalid'],
  ['skills/claims-sibling/SKILL.md', 'name-mismatch'],
  ['skills/claims-sibling/SKILL.md', 'path-collision'],
  ['skills/description-list/SKILL.md', 'description-invalid'],
  ['skills/dot-names/.', 'file-name-invalid'],
  ['skills/dot-names/..', 'file-name-invalid'],
  ['skills/dot-names/.git', 'file-name-invalid'],
  ['skills/dot-names/nested/.git/config', 'file-name-invalid'],
  ['skills/double--hyphen/SKILL.md', 'name-invalid'],
  ['skills/dup-a/twin/SKILL.md', 'duplicate-name'],
  ['skills/dup-b/twin/SKILL.md', 'duplicate-name'],
  ['skills/duplicate-key/SKILL.md', 'frontmatter-invalid'],
  ['skills/empty-description/SKILL.md', 'description-invalid'],
  ['skills/empty-skill-md/SKILL.md', 'frontmatter-missing'],
  ['skills/good-two/SKILL.md', 'path-collision'],
  ['skills/huge-frontmatter/SKILL.md', 'frontmatter-too-large'],
  ['skills/latin1/SKILL.md', 'skill-md-not-utf8'],
  ['skills/lfs/model.bin', 'lfs-pointer'],
  ['skills/links/dangling.md', 'symlink-dangling'],
  ['skills/links/self.md', 'symlink-loop'],
  ['skills/links/to-passwd.md', 'symlink-outside-skill'],
  ['skills/links/to-sibling.md', 'symlink-outside-skill'],
  ['skills/long-compatibility/SKILL.md', 'compatibility-invalid'],
  ['skills/long-description/SKILL.md', 'description-invalid'],
  ['skills/look-alike/SKILL.md', 'name-invalid'],
  ['skills/metadata-list/SKILL.md', 'metadata-invalid'],
  ['skills/metadata-number/SKILL.md', 'metadata-invalid'],
  ['skills/mismatch/SKILL.md', 'name-mismatch'],
  ['skills/missing-name/SKILL.md', 'name-missing'],
  ['skills/nested-count', 'too-many-files'],
  ['skills/no-description/SKILL.md', 'description-missing'],
  ['skills/no-frontmatter/SKILL.md', 'frontmatter-missing'],
  ['skills/not-a-mapping/SKILL.md', 'frontmatter-invalid'],
  ['skills/numeric-name/SKILL.md', 'name-invalid'],
  ['skills/sdk-refused/SKILL.md', 'frontmatter-unsupported'],
  ['skills/skill-md-folder/SKILL.md', 'skill-md-not-file'],
  ['skills/skill-md-symlink/SKILL.md', 'skill-md-not-file'],
  ['skills/tagged/SKILL.md', 'frontmatter-invalid'],
  ['skills/too-large', 'too-large'],
  ['skills/too-long-name/SKILL.md', 'name-invalid'],
  ['skills/too-many-files', 'too-many-files'],
  ['skills/trailing-/SKILL.md', 'name-invalid'],
  ['skills/unclosed/SKILL.md', 'frontmatter-unclosed'],
  ['skills/upper-case/SKILL.md', 'name-invalid'],
  ['skills/with-submodule/vendor/lib', 'submodule'],
  ['skills/yaml-syntax/SKILL.md', 'frontmatter-invalid'],
];

/** Folders holding an entry named SKILL.md, from the fixture's data: its tree folder and repo.yaml (raw paths as written). */
function skillFolders(): string[] {
  const root = path.join(PROJECT_ROOT, 'fixtures-repos', 'adversarial');
  const spec = parse(readFileSync(path.join(root, 'repo.yaml'), 'utf8')) as {
    commits: Array<{ symlinks?: Record<string, string>; raw?: Array<{ path: string }> }>;
  };
  const declared = [
    ...readdirSync(path.join(root, 'c1'), { recursive: true, encoding: 'utf8' }),
    ...Object.keys(spec.commits[0]!.symlinks ?? {}),
    ...(spec.commits[0]!.raw ?? []).map((entry) => entry.path),
  ];
  const folders = declared
    .map((entry) => entry.split(path.sep).join('/'))
    .filter((entry) => path.posix.basename(entry) === 'SKILL.md')
    .map((entry) => path.posix.dirname(entry));
  return [...new Set(folders)].sort();
}

describe('the adversarial fixture', () => {
  let ns: Namespace;
  const skillAt = (servedDir: string) => ns.skills.find((skill) => skill.servedDir === servedDir)!;
  beforeAll(async () => {
    ns = await namespaceOf('adv', adversarial.gitdir, commit);
  });

  it('reports every bad case by its exact reason', () => {
    expect(ns.problems.map((p) => [p.path, p.reason])).toEqual(EXPECTED_PROBLEMS);
  });

  it('serves or reports every skill folder the fixture declares: none is left out in silence', () => {
    const declared = skillFolders();
    // fixtures-repos/README.md: 34 broken, 4 good, the nested `inner`, 8 served with warnings (twin twice).
    expect(declared.length).toBe(47);
    const accounted = declared.filter(
      (dir) =>
        ns.skills.some((skill) => skill.dir === dir) ||
        ns.problems.some((problem) => problem.path === dir || problem.path.startsWith(`${dir}/`)),
    );
    expect(accounted).toEqual(declared);
  });

  it('still serves the good skills beside them, and those served with warnings', () => {
    expect(ns.skills.map((s) => s.servedDir)).toEqual([
      'skills/bad-file-names',
      'skills/bom-crlf',
      'skills/dot-names',
      'skills/dup-a/twin',
      'skills/dup-b/twin',
      'skills/good-one',
      'skills/lfs',
      'skills/links',
      'skills/nested-count/inner',
      'skills/odd-names',
      'skills/renamed-skill',
      'skills/with-submodule',
    ]);
  });

  it("serves a symlink inside its skill with its target's bytes, and nothing of the others", () => {
    const links = skillAt('skills/links');
    expect(links.files.map((f) => f.relPath)).toEqual(['SKILL.md', 'alias.md', 'guide.md']);
    expect(links.files[1]!.digest).toBe(links.files[2]!.digest);
  });

  it('leaves out files with bad names, and keeps the rest of that skill', () => {
    expect(skillAt('skills/bad-file-names').files.map((f) => f.relPath)).toEqual(['SKILL.md']);
    // '.', '..' and '.git' (a file, and a folder) are names no URI or checkout can hold.
    expect(skillAt('skills/dot-names').files.map((f) => f.relPath)).toEqual(['SKILL.md']);
  });

  it('parses a SKILL.md with a BOM and CRLF line ends', () => {
    expect(skillAt('skills/bom-crlf').frontmatter).toEqual({
      name: 'bom-crlf',
      description: expect.any(String),
    });
  });

  it('serves an LFS pointer as the bytes the commit holds', () => {
    const file = skillAt('skills/lfs').files.find((f) => f.relPath === 'model.bin')!;
    const held = fixtureFile('adversarial', 'c1', 'skills/lfs/model.bin');
    expect([file.size, file.digest]).toEqual([held.byteLength, digestOf(held)]);
  });

  it('gives files named after Object.prototype keys a media type of their own', () => {
    const dir = buildSnapshot(ns).dirs.get(`skill://adv/${commit}/skills/odd-names`)!;
    expect(dir.map((child) => [child.name, child.mimeType])).toEqual([
      ['%2e%2e', 'application/octet-stream'],
      ['Q&A notes.md', 'text/markdown'],
      ['SKILL.md', 'text/markdown'],
      ['a%2Fb', 'application/octet-stream'],
      ['x.__proto__', 'application/octet-stream'],
      ['x.constructor', 'application/octet-stream'],
    ]);
  });

  it('encodes odd file names so that every URI decodes back to exactly its file', async () => {
    const { source } = sourceOver(
      createCatalog({ sources: [{ id: 'adv', current: ns, retained: [] }], failures: [] }),
    );
    const entry = await source.get(`skill://adv/${commit}/skills/odd-names/SKILL.md`, {} as never);
    const uris = entry!.resources as Array<{ uri: string; digest: string }>;
    expect(uris.map((r) => r.uri.slice(r.uri.lastIndexOf('/') + 1)).sort()).toEqual([
      '%252e%252e',
      'Q&A%20notes.md',
      'SKILL.md',
      'a%252Fb',
      'x.__proto__',
      'x.constructor',
    ]);
    for (const resource of uris) {
      const name = decodeURIComponent(resource.uri.slice(resource.uri.lastIndexOf('/') + 1));
      const held = fixtureFile('adversarial', 'c1', `skills/odd-names/${name}`);
      const read = await source.read(resource.uri);
      const bytes = 'text' in read ? new TextEncoder().encode(read.text) : read.bytes;
      expect(digestOf(bytes)).toBe(digestOf(held));
      expect(resource.digest).toBe(digestOf(held));
    }
  });
});
