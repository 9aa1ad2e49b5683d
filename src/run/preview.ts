import { createHash } from 'node:crypto';

/**
 * What a person approves: exactly what will run, and the payload a confirmation token is bound to. Names of
 * variables only, never their values. Fields are only ever added.
 */
export interface WillRun {
  source: string;
  commit: string;
  /** The skill's folder in the repository ('.' for the root): what grants name. */
  skill: string;
  /** The URI of its SKILL.md. */
  uri: string;
  /** Below the skill folder. */
  script: string;
  /** `sha256:` of the script's bytes at the commit, as the manifest publishes it. */
  digest: string;
  interpreter: string;
  interpreterPath: string;
  /** The script path, then the arguments exactly as passed. */
  argv: string[];
  /** The folder the skill's files are materialised in, read-only: the script's working directory. */
  cwd: string;
  timeoutMs: number;
  /** Every variable the script will get, sorted. */
  envNames: string[];
  /** Granted variables the server's environment does not set (only when there are some). */
  envNotSet?: string[];
  /** Hosts the skill declares it reaches (only when it declares some): shown, not enforced. */
  egress?: string[];
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/** The parts of a preview a token records, so a refused token can say what changed. */
export interface PreviewParts {
  /** The whole preview. */
  all: string;
  skill: string;
  commit: string;
  script: string;
  argv: string;
}

/** Hashes of the preview and of its parts; the preview is always built in one key order, so JSON is canonical. */
export function partsOf(willRun: WillRun): PreviewParts {
  return {
    all: sha256(JSON.stringify(willRun)),
    skill: sha256(JSON.stringify([willRun.source, willRun.skill])),
    commit: willRun.commit,
    script: sha256(JSON.stringify([willRun.script, willRun.digest])),
    argv: sha256(JSON.stringify(willRun.argv)),
  };
}
