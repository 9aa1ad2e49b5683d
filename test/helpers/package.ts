import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './fixtures.ts';

export interface Packed {
  tarball: string;
  /** Paths inside the package, as `npm pack` lists them. */
  files: string[];
  /** Bytes of the tarball. */
  size: number;
}

interface LockEntry {
  version?: string;
  name?: string;
  resolved?: string;
  dev?: boolean;
  devOptional?: boolean;
  link?: boolean;
}

const npm = (args: string[], cwd: string) =>
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/** `npm pack` of the project into `dir` (its `prepack` builds dist/ first, as for a release). */
export function packProject(dir: string): Packed {
  const [report] = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], PROJECT_ROOT)) as Array<{
    filename: string;
    size: number;
    files: Array<{ path: string }>;
  }>;
  return {
    tarball: path.join(dir, report!.filename),
    files: report!.files.map((f) => f.path),
    size: report!.size,
  };
}

/**
 * Installs the tarball as `npm install -g` would lay it out under `prefix` (`lib/node_modules/skillpin`, the
 * command in `bin/`), from npm's cache only: no registry is asked. `npm install -g` reads no lockfile, and npm's
 * cache holds the dependencies' tarballs (by integrity) but not their registry metadata, so the install is an
 * `npm ci --offline` in `prefix/lib` with a lockfile made from the project's own (the tested versions).
 */
export function installGlobally(packed: Packed, prefix: string): string {
  const lib = path.join(prefix, 'lib');
  mkdirSync(lib, { recursive: true });
  const project = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const lock = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const spec = `file:${path.relative(lib, packed.tarball)}`;
  const integrity = `sha512-${createHash('sha512').update(readFileSync(packed.tarball)).digest('base64')}`;
  const packages: Record<string, unknown> = {
    '': { dependencies: { skillpin: spec } },
    'node_modules/skillpin': {
      version: project['version'],
      resolved: spec,
      integrity,
      dependencies: project['dependencies'],
      bin: project['bin'],
      engines: project['engines'],
    },
  };
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (!key.startsWith('node_modules/') || entry.dev || entry.devOptional || entry.link) continue;
    // The lockfile leaves out registry URLs (omit-lockfile-registry-resolved); offline, npm finds each tarball
    // in its cache by integrity, and the URL only names it.
    const name = entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    packages[key] = {
      ...entry,
      resolved:
        entry.resolved ??
        `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${entry.version}.tgz`,
    };
  }
  writeFileSync(
    path.join(lib, 'package.json'),
    JSON.stringify({ private: true, dependencies: { skillpin: spec } }),
  );
  writeFileSync(
    path.join(lib, 'package-lock.json'),
    JSON.stringify({ lockfileVersion: 3, requires: true, packages }),
  );
  npm(['ci', '--offline'], lib);
  mkdirSync(path.join(prefix, 'bin'));
  symlinkSync('../lib/node_modules/skillpin/bin/skillpin.js', path.join(prefix, 'bin', 'skillpin'));
  return path.join(lib, 'node_modules', 'skillpin');
}

/**
 * The environment of a host starting `npx -y skillpin …`: npx finds `skillpin` in the global prefix's bin
 * folder and runs it without asking the registry; offline, so a lookup there would fail instead.
 */
export function hostEnvironment(prefix: string): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? '',
    TMPDIR: process.env['TMPDIR'] ?? '',
    npm_config_prefix: prefix,
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  };
}
