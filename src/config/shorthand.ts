/** `owner/repo` on GitHub: an owner of 1–39 letters, digits and inner hyphens, a repository name. */
export const GITHUB_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/(?!\.{1,2}$)[A-Za-z0-9._-]+$/;
/** `group/project` on GitLab, with any depth of subgroups (`group/sub/project`). */
export const GITLAB_NAME = /^(?:[A-Za-z0-9_][A-Za-z0-9_.-]*\/)+[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

export type Shorthand = 'github' | 'gitlab';

const HOSTS: Record<Shorthand, string> = { github: 'https://github.com', gitlab: 'https://gitlab.com' };

/** The https clone URL a short name stands for: `github: o/r` → `https://github.com/o/r.git`. */
export function shorthandUrl(kind: Shorthand, name: string): string {
  return `${HOSTS[kind]}/${name.replace(/\.git$/, '')}.git`;
}

/** `github:o/r` or `gitlab:g/p` (a space after the colon allowed), as `check` and `diff` take it. */
export function parseShorthand(text: string): { kind: Shorthand; name: string } | undefined {
  const match = /^(github|gitlab):\s*(\S+)$/.exec(text);
  if (match === null) return undefined;
  const kind = match[1] as Shorthand;
  const name = match[2]!;
  return (kind === 'github' ? GITHUB_NAME : GITLAB_NAME).test(name) ? { kind, name } : undefined;
}

const decoded = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** What a web page URL of a folder stands for: the repository (`github: o/r`, `url: …`), a ref, a folder. */
export interface WebFolder {
  repository: string;
  ref: string;
  path?: string;
}

/**
 * The parts of `url` when it is the web page of a folder at a ref (`https://github.com/o/r/tree/<ref>/<path>`,
 * GitLab's `…/-/tree/<ref>/<path>`); `undefined` for other URLs. The split is a guess: a ref may hold `/`.
 */
export function webFolder(url: string): WebFolder | undefined {
  if (!URL.canParse(url)) return undefined;
  const { hostname, pathname } = new URL(url);
  const segments = pathname.split('/').filter((segment) => segment !== '');
  let repository: string | undefined;
  let rest: string[] = [];
  const gitlabAt = segments.indexOf('-');
  if (hostname === 'github.com' && segments[2] === 'tree' && segments.length > 3) {
    repository = `github: ${segments[0]}/${segments[1]}`;
    rest = segments.slice(3);
  } else if (gitlabAt > 0 && segments[gitlabAt + 1] === 'tree') {
    const project = segments.slice(0, gitlabAt).join('/');
    repository = hostname === 'gitlab.com' ? `gitlab: ${project}` : `url: https://${hostname}/${project}.git`;
    rest = segments.slice(gitlabAt + 2);
  }
  if (repository === undefined || rest.length === 0) return undefined;
  const [ref, ...folder] = rest.map(decoded);
  return { repository, ref: ref!, path: folder.length > 0 ? folder.join('/') : undefined };
}

/** Why a `url:` that is a web page of a folder is refused, with the config lines that say the same. */
export function webFolderAdvice(url: string): string | undefined {
  const found = webFolder(url);
  if (found === undefined) return undefined;
  const lines = [
    found.repository,
    `ref: ${found.ref}`,
    ...(found.path === undefined ? [] : [`paths: [${found.path}]`]),
  ];
  return (
    'is the web page of a folder at a ref, not a repository, and where its ref ends and its path begins is ' +
    `ambiguous (a ref may hold "/"); write the source as:\n${lines.map((line) => `    ${line}`).join('\n')}`
  );
}
