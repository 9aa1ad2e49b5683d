'use strict';
process.stdout.write('here\n');
