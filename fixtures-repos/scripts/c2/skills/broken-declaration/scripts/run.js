'use strict';
process.stdout.write('never runs\n');
