'use strict';
process.stdout.write('ok\n');
