import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { ConfigError } from './error.ts';
import {
  type ConfigProblem,
  type ConfigYaml,
  formatProblem,
  keyPath,
  plainWords,
  positionOf,
} from './messages.ts';
import { resolveConfig } from './resolve.ts';
import { yamlProblem } from './yamlErrors.ts';
import { configSchema, type RawConfig } from './schema.ts';
import type { Config } from './types.ts';

/**
 * Reads a YAML config file in three steps: parse the YAML (keeping where each key is), check it against the
 * schema, resolve what it refers to. Throws `ConfigError` naming every problem of the step that finds any.
 */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  const yaml = parseYaml(file, readConfigText(file));
  const raw = checkSchema(yaml);
  return resolveConfig(raw, yaml, env);
}

/** The config file's text. A file that cannot be read says where a relative path was looked for. */
function readConfigText(file: string): string {
  const absolute = path.resolve(file);
  try {
    return readFileSync(absolute, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A relative path names the folder it was resolved against: the user may be in another one than they think.
    const where = path.isAbsolute(file)
      ? ''
      : `: looked for ${absolute} (a relative path resolves against the current folder, ${process.cwd()})`;
    throw new ConfigError(
      `${file}: ${code === 'ENOENT' ? 'no such file' : 'cannot be read'} (${code ?? 'error'})${where}`,
    );
  }
}

/** Step 1: the YAML 1.2 document and where each of its keys is; every syntax error with its line. */
function parseYaml(file: string, text: string): ConfigYaml {
  const counter = new LineCounter();
  const doc = parseDocument(text, {
    version: '1.2',
    schema: 'core',
    uniqueKeys: true,
    prettyErrors: false,
    lineCounter: counter,
    // A key that is a mapping is refused by the schema, without the parser's warning on stderr.
    logLevel: 'error',
  });
  if (doc.errors.length > 0) {
    // One problem per place: the parser may report two errors of one mistake there, the first says what to do.
    const problems = new Map<string, string>();
    for (const error of doc.errors) {
      const problem = yamlProblem(error, text, counter);
      const at = `${problem.line}:${problem.column}`;
      if (!problems.has(at)) problems.set(at, formatProblem(file, problem));
    }
    throw new ConfigError([...problems.values()]);
  }
  return { file, doc, counter, data: doc.toJS() ?? {} };
}

/** Step 2: the data checked against the schema, its defaults filled in; every problem in plain words, at its key. */
function checkSchema(yaml: ConfigYaml): RawConfig {
  const parsed = configSchema.safeParse(yaml.data);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.flatMap((issue) => {
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [undefined];
    return plainWords(issue, yaml.data, configSchema).map(
      (message, index): ConfigProblem => ({
        ...positionOf(yaml, issue.path, keys[index]),
        key: issue.path.length === 0 ? undefined : keyPath(issue.path),
        message,
      }),
    );
  });
  throw new ConfigError(firstPerKey(problems).map((problem) => formatProblem(yaml.file, problem)));
}

/** One problem per key (the first says what to fix; the others follow from it), in the order of the file. */
function firstPerKey(problems: readonly ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  const first = problems.filter((p) => {
    const id = `${p.key}\0${p.message.startsWith('unknown key') ? p.message : ''}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  return first.sort(
    (a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? 0) - (b.column ?? 0),
  );
}
