// Loaded with `node --import` into a process under test: at exit it writes its peak resident set size
// (getrusage's ru_maxrss, KiB) on stderr, as the last line.
import { writeSync } from 'node:fs';

process.on('exit', () => writeSync(2, `\nskillpin-peak-rss-kib ${process.resourceUsage().maxRSS}\n`));
