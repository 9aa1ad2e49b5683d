import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configSchema, loadConfig } from '../src/config/index.ts';
import { EXIT_CODES } from '../src/shared/exitCodes.ts';
import { DIGEST_PAGE, renderLockfile } from '../src/pins/lockfile.ts';
import { REASONS } from '../src/shared/reasons.ts';
import { fixture, PROJECT_ROOT } from './helpers/fixtures.ts';

const reasons = readFileSync(path.join(PROJECT_ROOT, 'docs', 'reasons.md'), 'utf8');

describe('documentation', () => {
  it("server.json names package.json's version, twice, and the CHANGELOG has a heading for it", () => {
    const read = (file: string) => JSON.parse(readFileSync(path.join(PROJECT_ROOT, file), 'utf8'));
    const pkg = read('package.json') as { version: string; publishConfig: Record<string, unknown> };
    const server = read('server.json') as { version: string; packages: Array<{ version: string }> };
    expect([server.version, ...server.packages.map((p) => p.version)]).toEqual([pkg.version, pkg.version]);
    expect(pkg.publishConfig).toEqual({ access: 'public', provenance: true });
    const changelog = readFileSync(path.join(PROJECT_ROOT, 'CHANGELOG.md'), 'utf8');
    expect(changelog).toContain(`\n## ${pkg.version}\n`);
  });

  it('the package runs no script when installed: dist/ is built before packing', () => {
    const { scripts } = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(
      ['preinstall', 'install', 'postinstall', 'prepare'].filter((name) => scripts[name] !== undefined),
    ).toEqual([]);
    expect(scripts['prepack']).toBe('npm run build');
  });

  it('the README, docs/development.md and .ci/run name one list of the system packages `npm test` needs', () => {
    const read = (file: string) => readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
    const installed = (file: string) =>
      [...read(file).matchAll(/^sudo apt-get install ([a-z0-9 .+-]+)$/gm)].map((m) => m[1]!.split(' '));
    const ci = /^packages=\(([^)]*)\)$/m.exec(read('.ci/run'))?.[1]?.split(' ');
    const packages = ['git', 'redis-server', 'chromium', 'gnupg', 'openssh-client'];
    expect([installed('README.md'), installed('docs/development.md'), ci]).toEqual([
      [packages],
      [packages],
      packages,
    ]);
  });

  it("the lockfile's header names the page of skillpin's repository that explains aggregate digests", () => {
    const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      repository: { url: string };
    };
    const repository = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
    expect(DIGEST_PAGE).toBe(`${repository}/blob/main/docs/following-and-pins.md#aggregate-digest`);
    expect(readFileSync(path.join(PROJECT_ROOT, 'docs', 'following-and-pins.md'), 'utf8')).toContain(
      '\n### Aggregate digest\n',
    );
    expect(renderLockfile({ version: 1, sources: [] }).split('\n').slice(1, 3)).toEqual([
      "# commit it and review its changes like code. A skill's digest is the SHA-256 of its files, as",
      `# ${DIGEST_PAGE} explains.`,
    ]);
  });

  it('every link of the README and docs/ between files of the repository finds its file and its heading', () => {
    const pages = [
      'README.md',
      ...readdirSync(path.join(PROJECT_ROOT, 'docs')).map((name) => `docs/${name}`),
    ];
    // GitHub's heading anchors: lowercase, what is not a letter, digit, `_`, `-` or space dropped, spaces as hyphens.
    const slug = (heading: string) =>
      heading
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
        .replaceAll(' ', '-');
    const headings = (page: string) =>
      readFileSync(path.join(PROJECT_ROOT, page), 'utf8')
        .split('\n')
        .filter((line) => /^#{1,6} /.test(line))
        .map((line) => slug(line.replace(/^#+ /, '')));
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(path.join(PROJECT_ROOT, page), 'utf8');
      for (const [, target = ''] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [file = '', anchor] = target.split('#');
        const resolved =
          file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
        if (!existsSync(path.join(PROJECT_ROOT, resolved))) broken.push(`${page}: ${target} (no file)`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !headings(resolved).includes(anchor))
          broken.push(`${page}: ${target} (no heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the table of docs/exit-codes.md lists exactly the exported exit statuses, with their names and meanings', () => {
    const page = readFileSync(path.join(PROJECT_ROOT, 'docs', 'exit-codes.md'), 'utf8');
    const rows = page
      .split('\n')
      .filter((line) => /^\| `\d+` \|/.test(line))
      .map((row) => row.split('|').map((cell) => cell.trim()));
    expect(rows.map(([, status, name, , meaning]) => [name, status, meaning])).toEqual(
      Object.entries(EXIT_CODES).map(([name, { status, meaning }]) => [
        `\`${name}\``,
        `\`${status}\``,
        meaning,
      ]),
    );
  });

  it('the reason table of docs/reasons.md lists exactly the registry: every code, with its kind and severity', () => {
    const rows = reasons.split('\n').filter((line) => /^\| `[a-z0-9-]+`/.test(line));
    const documented = new Map<string, string>();
    for (const row of rows) {
      const [codes = '', kind = '', severity = ''] = row
        .split('|')
        .slice(1, 4)
        .map((cell) => cell.trim());
      if (!['error', 'warning', 'info'].includes(severity)) continue;
      for (const code of codes.match(/`([a-z0-9-]+)`/g) ?? [])
        documented.set(code.slice(1, -1), `${kind} ${severity}`);
    }
    expect(Object.fromEntries(documented)).toEqual(
      Object.fromEntries(
        Object.entries(REASONS).map(([code, { kind, severity }]) => [code, `${kind} ${severity}`]),
      ),
    );
  });

  it('config.example.yaml is a valid config that shows every key', () => {
    const file = path.join(PROJECT_ROOT, 'config.example.yaml');
    expect(() =>
      loadConfig(file, {
        POLICIES_TOKEN: 't',
        SKILLPIN_WEBHOOK_SECRET: 's',
        SKILLPIN_RUN_SECRET: 'r',
        SKILLPIN_CI_TOKEN: 'ci-token-0123456789abcdef',
        REDIS_URL: 'redis://:secret@redis.example.com:6379',
        SKILLPIN_COORDINATION_SECRET: 'coordination-secret-0123456789',
      }),
    ).not.toThrow();
    const example = parse(readFileSync(file, 'utf8')) as Record<string, unknown> & {
      sources: Array<Record<string, unknown>>;
    };
    const nested = (key: string) =>
      Object.keys(
        (
          configSchema.shape[key as keyof typeof configSchema.shape] as unknown as {
            unwrap(): { shape: object };
          }
        ).unwrap().shape,
      );
    expect(Object.keys(example).sort()).toEqual(Object.keys(configSchema.shape).sort());
    // Shown commented out, so that a copy works as any user: runs.user (only root can switch users).
    const commented: Record<string, string[]> = { runs: ['user'] };
    for (const key of ['cache', 'sync', 'webhook', 'http', 'git', 'runs', 'coordination'])
      expect(Object.keys(example[key] as object).sort()).toEqual(
        nested(key)
          .filter((name) => !commented[key]?.includes(name))
          .sort(),
      );
    expect(readFileSync(file, 'utf8')).toContain('\n  # user: nobody ');
    const sourceKeys = new Set(example.sources.flatMap((source) => Object.keys(source)));
    expect([...sourceKeys].sort()).toEqual([
      'cacheScope',
      'commit',
      'credentialHelper',
      'github',
      'gitlab',
      'id',
      'keep',
      'list',
      'maxRefs',
      'path',
      'paths',
      'poll',
      'ref',
      'refs',
      'run',
      'strictNames',
      'token',
      'url',
      'verify',
    ]);
    const verify = example.sources.find((source) => source['verify'] !== undefined)!['verify'] as object;
    expect(Object.keys(verify).sort()).toEqual(['gpgKeys', 'require', 'sshAllowedSigners']);
    const auth = example['auth'] as {
      tokens: Array<Record<string, unknown>>;
      oauth: Record<string, unknown>;
    };
    expect(Object.keys(auth).sort()).toEqual(['oauth', 'tokens']);
    expect(Object.keys(auth.tokens[0]!).sort()).toEqual(['name', 'sources', 'token']);
    expect(Object.keys(auth.oauth).sort()).toEqual(['audience', 'issuer', 'jwksUrl', 'scopes']);
  });

  it('the example config pins the commit the fixtures build', () => {
    const example = parse(readFileSync(path.join(PROJECT_ROOT, 'examples', 'skillpin.yaml'), 'utf8')) as {
      sources: Array<{ id: string; commit?: string }>;
    };
    expect(example.sources.find((s) => s.id === 'catalog')?.commit).toBe(fixture('catalog').commits['c2']);
  });
});
