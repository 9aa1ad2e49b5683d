#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so the installed `skillpin` command is the same code as `npx tsx src/cli.ts`.
import { register } from 'tsx/esm/api';

register();
const { program } = await import('../src/cli.ts');
await program().parseAsync(process.argv);
