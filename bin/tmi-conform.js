#!/usr/bin/env node
// Entry point of the `tmi-conform` command. The kit ships as TypeScript and runs it through
// tsx's loader, so there is no build step between a checkout and a working command.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
