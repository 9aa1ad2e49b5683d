'use strict';
// Starts a child in the script's own process group, says its pid, and never ends.
const { spawn } = require('node:child_process');
const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
process.stdout.write(`${child.pid}\n`);
setInterval(() => {}, 1000);
