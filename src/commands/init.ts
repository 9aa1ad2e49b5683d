import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { repositoryRootOf } from '../git/index.ts';
import { EXIT, type ExitStatus } from '../shared/exitCodes.ts';
import { type Ignored, ignoreIn } from './gitignore.ts';

/** The starter's dataDir, beside the config. */
const DATA_DIR = '.skillpin';

/** The local source: the repository holding the config's folder, else one to create, commented out. */
function localSource(repository: string | undefined): string {
  if (repository !== undefined)
    return [
      '  # This repository, read in place: the skills committed at HEAD (uncommitted edits are not served).',
      '  - id: local',
      `    path: ${repository}`,
      '    ref: HEAD',
      '    poll: 30s                        # how often HEAD is looked at again',
    ].join('\n');
  return [
    '  # A repository on this machine, read in place. This folder is not in one yet: `git init`, commit a',
    '  # skills/<name>/SKILL.md, then remove the # in front of the next four lines.',
    '  # - id: local',
    '  #   path: .',
    '  #   ref: HEAD',
    '  #   poll: 30s',
  ].join('\n');
}

/** A commented starter config that runs as written: one public source and one local. */
export function starterConfig(repository: string | undefined): string {
  return `${[
    '# skillpin: serves Agent Skills from git repositories, pinned to exact commits, over MCP.',
    '#   skillpin serve --config skillpin.yaml                        # stdio, for an MCP host to start',
    '#   skillpin serve --config skillpin.yaml --http 127.0.0.1:3917  # Streamable HTTP at /mcp',
    "#   skillpin check                                               # are this repository's skills served?",
    '# Every key: config.example.yaml and docs/configuration.md of skillpin.',
    '',
    `dataDir: ${DATA_DIR}                   # fetched repositories, one index file per commit, state.json (in .gitignore)`,
    '',
    'sources:',
    "  # A public repository: Anthropic's skills, following main (re-checked every 5 minutes). Pin a",
    '  # commit instead of a ref with `commit: <40 hex>`; `skillpin lock` writes every pin to skillpin.lock.',
    '  - id: anthropic',
    '    github: anthropics/skills',
    '    ref: main',
    '    paths: [skills]                  # only look for skills under these folders',
    '',
    localSource(repository),
  ].join('\n')}\n`;
}

/** `skillpin init [file]`: writes the starter config; an existing file is kept unless `force`. */
export async function init(
  file: string,
  options: { force?: boolean },
  io: { out: (text: string) => void; err: (text: string) => void },
): Promise<ExitStatus> {
  const target = path.resolve(file);
  const root = await repositoryRootOf(path.dirname(target));
  const repository = root === undefined ? undefined : path.relative(path.dirname(target), root) || '.';
  try {
    writeFileSync(target, starterConfig(repository), { flag: options.force ? 'w' : 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    io.err(
      code === 'EEXIST'
        ? `skillpin init: ${file} exists; keeping it (--force replaces it)\n`
        : `skillpin init: ${file} cannot be written (${code ?? 'error'})\n`,
    );
    return EXIT.cannotCreate;
  }
  io.out(
    `wrote ${file}: the public anthropics/skills and ${repository === undefined ? 'a local source to enable once this folder is a git repository' : `this repository (${repository})`}.\n`,
  );
  const folder = path.dirname(target);
  let ignored: Ignored;
  try {
    ignored = ignoreIn(
      folder,
      DATA_DIR,
      "skillpin's dataDir: fetched repositories and indexes (skillpin init)",
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    io.err(
      `skillpin init: ${path.join(folder, '.gitignore')} cannot be written (${code ?? 'error'}); add /${DATA_DIR}/ to it yourself\n`,
    );
    return EXIT.cannotCreate;
  }
  if (ignored !== 'already')
    io.out(
      `${ignored === 'created' ? 'created .gitignore with' : 'added to .gitignore:'} /${DATA_DIR}/ (dataDir, not to commit).\n`,
    );
  // The README's form: a host starts its servers from a folder of its own, so the path is absolute.
  const command = `skillpin serve -c ${shellWord(target)}`;
  io.out(`Next: ${command} --http 127.0.0.1:3917, or give your MCP host the command ${command}\n`);
  return EXIT.ok;
}

/** `word` as a shell reads it back: quoted when it holds anything but letters, digits and `_./-`. */
const shellWord = (word: string) => (/^[\w./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`);
