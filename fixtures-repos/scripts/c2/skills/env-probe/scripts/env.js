'use strict';
const fs = require('node:fs');

let parentEnviron;
try {
  parentEnviron = fs.readFileSync(`/proc/${process.ppid}/environ`).toString('latin1').replace(/\0/g, '');
} catch (error) {
  parentEnviron = `unreadable: ${error.code}`;
}
process.stdout.write(JSON.stringify({ env: process.env, cwd: process.cwd(), parentEnviron }));
