'use strict';
process.stdout.write('an undeclared helper\n');
