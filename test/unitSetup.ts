import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

// What makes a test a unit test: it starts no process and opens no server. One that does fails here, and
// belongs in the integration project (vitest.config.ts).
const refuse = (what: string) => () => {
  throw new Error(`a unit test may not ${what}: move the file to the integration project (vitest.config.ts)`);
};
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const)
  childProcess[name] = refuse(`start a process (child_process.${name})`) as never;
net.Server.prototype.listen = refuse('open a server (listen)') as never;
syncBuiltinESMExports();
