#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so the installed `skillpin` command is the same code as `npx tsx src/cli.ts`.
import { register } from 'tsx/esm/api';

register();
const { run } = await import('../src/cli.ts');
process.exitCode = await run(process.argv.slice(2));
