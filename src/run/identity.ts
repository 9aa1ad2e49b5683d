import { readFileSync } from 'node:fs';

/** The user a script runs as, when it is not the server's own. */
export interface RunUser {
  name: string;
  uid: number;
  gid: number;
}

/** Who scripts run as: the server's own user (`same`), another user, or nobody can be had (`unavailable`). */
export type RunIdentity =
  | { state: 'same' }
  | { state: 'other'; user: RunUser }
  | { state: 'unavailable'; detail: string };

/** The user root's scripts run as when `runs.user` names none. */
export const ROOT_DEFAULT_USER = 'nobody';

/** name → uid and primary gid, from passwd(5) text; lines that do not parse are skipped. */
export function parsePasswd(text: string): RunUser[] {
  const users: RunUser[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields.length < 4 || !/^\d+$/.test(fields[2]!) || !/^\d+$/.test(fields[3]!)) continue;
    users.push({ name: fields[0]!, uid: Number(fields[2]), gid: Number(fields[3]) });
  }
  return users;
}

/**
 * Who scripts run as, given `runs.user` and the server's uid: the configured user (a name, or a numeric uid
 * whose gid is its passwd entry's, else the same number), `nobody` when the server runs as root and none is
 * configured, else the server's own user. A user that is the server's own is `same`.
 */
export function runIdentity(
  configured: string | undefined,
  serverUid: number | undefined,
  passwd: () => string = () => readFileSync('/etc/passwd', 'utf8'),
): RunIdentity {
  const wanted = configured ?? (serverUid === 0 ? ROOT_DEFAULT_USER : undefined);
  if (wanted === undefined || serverUid === undefined) return { state: 'same' };
  let users: RunUser[];
  try {
    users = parsePasswd(passwd());
  } catch {
    users = [];
  }
  const numeric = /^\d+$/.test(wanted);
  const found = users.find((user) => (numeric ? user.uid === Number(wanted) : user.name === wanted));
  const user = found ?? (numeric ? { name: wanted, uid: Number(wanted), gid: Number(wanted) } : undefined);
  if (user === undefined)
    return {
      state: 'unavailable',
      detail: `runs.user ${JSON.stringify(wanted)} names no user in /etc/passwd`,
    };
  if (user.uid === serverUid) return { state: 'same' };
  if (serverUid !== 0)
    return {
      state: 'unavailable',
      detail: `runs.user ${JSON.stringify(wanted)} is another user, and only root can start a process as another user`,
    };
  return { state: 'other', user };
}
