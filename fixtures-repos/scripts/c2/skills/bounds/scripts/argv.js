'use strict';
// c2: the same output, other bytes.
process.stdout.write(JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd() }));
