'use strict';
process.stdout.write('partial output\n');
process.stderr.write('bad input: expected a date\n');
process.exitCode = 3;
