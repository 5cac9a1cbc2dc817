#!/usr/bin/env node
// Entry point of the `tmi-conform` command. It runs the kit's compiled form in dist/ when that
// was compiled from exactly the sources beside it (scripts/compiled.mjs: npm install and npm pack
// compile it), and the TypeScript through tsx's loader otherwise: a checkout with a changed
// source runs what it says, with no build step in between, only slower to start.
import util from 'node:util';
import { isCompiledUpToDate, kitModule } from '../scripts/compiled.mjs';

// module-state: the command's entry point: it runs the command and ends with its exit code.
process.exitCode = await start(process.argv.slice(2));

async function start(args) {
  // Checked before anything else loads: on an older Node the kit's dependencies fail while loading
  // (undici 7 needs the global File of Node 20), with a stack trace instead of the reason.
  const [major, minor] = process.versions.node.split('.').map(Number);
  const supported = major === 20 ? minor >= 19 : major === 22 ? minor >= 12 : major > 22;
  if (!supported) {
    process.stderr.write(
      `tmi-conform: Node.js ${process.versions.node} is not supported: use Node.js 20.19 or later, 22.12 or later, or 24 (package.json "engines")\n`,
    );
    process.exit(2);
  }

  // http-proxy 1.18 (the proxy's relay) copies objects with util._extend, which Node 22 and later
  // deprecate with a warning on stderr at its first use, in the middle of the proxy's output. The
  // same copy (own enumerable properties of an object), without the warning; set before http-proxy
  // loads, as it takes util._extend when it loads.
  // module-state: node:util is the process's own; http-proxy takes this function from it.
  util._extend = (target, source) => (source === null || typeof source !== 'object' ? target : Object.assign(target, source));

  const compiled = isCompiledUpToDate();
  if (!compiled) {
    const { register } = await import('tsx/esm/api');
    register();
  }
  const { main } = await import(kitModule('cli/main.ts', compiled));
  return main(args);
}
