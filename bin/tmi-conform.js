#!/usr/bin/env node
// Entry point of the `tmi-conform` command. The kit ships as TypeScript and runs it through
// tsx's loader, so there is no build step between a checkout and a working command.
import util from 'node:util';
import { register } from 'tsx/esm/api';

// http-proxy 1.18 (the proxy's relay) copies objects with util._extend, which Node 22 and later
// deprecate with a warning on stderr at its first use, in the middle of the proxy's output. The
// same copy (own enumerable properties of an object), without the warning; set before http-proxy
// loads, as it takes util._extend when it loads.
util._extend = (target, source) => (source === null || typeof source !== 'object' ? target : Object.assign(target, source));

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
