// The git pipeline `skillpin check` is measured against (bench/start.ts), as one process: `git ls-tree -r` of the
// commit, every blob through one `git cat-file --batch`, sha256 of each (bench/index.ts's peer). Prints the count.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';

const [gitdir, commit] = process.argv.slice(2);
const listing = spawnSync('git', ['--git-dir', gitdir, 'ls-tree', '-r', commit], {
  encoding: 'utf8',
  maxBuffer: 1 << 30,
});
const oids = listing.stdout
  .split('\n')
  .filter(Boolean)
  .map((line) => line.split(/\s+/)[2]);
const child = spawn('git', ['--git-dir', gitdir, 'cat-file', '--batch'], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
child.stdin.end(`${oids.join('\n')}\n`);
let pending = Buffer.alloc(0);
let hashed = 0;
for await (const chunk of child.stdout) {
  pending = Buffer.concat([pending, chunk]);
  for (;;) {
    const newline = pending.indexOf(10);
    if (newline === -1) break;
    const size = Number(pending.subarray(0, newline).toString().split(' ')[2]);
    if (pending.length < newline + 1 + size + 1) break;
    createHash('sha256')
      .update(pending.subarray(newline + 1, newline + 1 + size))
      .digest('hex');
    hashed++;
    pending = pending.subarray(newline + 1 + size + 1);
  }
}
process.stdout.write(`${hashed} blobs hashed\n`);
