'use strict';
// 5 MiB of lowercase lines on stdout, then one line on stderr.
const chunk = Buffer.alloc(1024 * 1024, 'abcdefghijklmnopqrstuvwxyz\n');
let left = 5;
const write = () => {
  while (left > 0) {
    left -= 1;
    if (!process.stdout.write(chunk)) return process.stdout.once('drain', write);
  }
  process.stderr.write('flooded\n');
};
write();
