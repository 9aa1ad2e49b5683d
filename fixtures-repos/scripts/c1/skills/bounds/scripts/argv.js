'use strict';
process.stdout.write(JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd() }));
