#!/usr/bin/env node
// Entry point of the `tmi-conform` command. The kit ships as TypeScript and runs it through
// tsx's loader, so there is no build step between a checkout and a working command.
import util from 'node:util';

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

  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../cli/main.ts');
  return main(args);
}
