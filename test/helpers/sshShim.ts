import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A stand-in for ssh, for GIT_SSH_COMMAND: it takes ssh's arguments (options, `[user@]host`, the remote command),
 * logs the destination, and runs the command (`git-upload-pack '<path>'`) on this machine, as sshd would on the
 * host. `-G` answers like OpenSSH, so git treats it as one (it passes `-p <port>` and `-o SendEnv=…`).
 */
export function sshShim(): { command: string; log: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'skillpin-ssh-'));
  const log = path.join(dir, 'destinations.log');
  const command = path.join(dir, 'ssh');
  writeFileSync(
    command,
    `#!/bin/sh
port=22
while [ $# -gt 0 ]; do
  case "$1" in
    -G) exit 0 ;;
    -p) port="$2"; shift 2 ;;
    -o|-l|-i) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
echo "$1 port=$port" >> '${log}'
shift
exec sh -c "$*"
`,
    { mode: 0o755 },
  );
  return { command, log };
}
