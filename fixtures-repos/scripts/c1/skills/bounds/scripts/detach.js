'use strict';
// Leaves a grandchild in a session of its own that holds stdout and stderr open for a minute, then exits.
const { spawn } = require('node:child_process');
const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { detached: true, stdio: 'inherit' });
process.stdout.write(`${child.pid}\n`);
child.unref();
