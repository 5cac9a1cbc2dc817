// Where the proxy benchmark's files are: the kit's command, its output folder (git ignores it),
// the journal of (c), and the Prism it installs for (d).
import { join } from 'node:path';
import { packageRoot } from '../../rules/paths.ts';

export const BIN = join(packageRoot, 'bin', 'tmi-conform.js');
export const OUT = join(packageRoot, 'bench', 'out');
/** Where (c) writes its journal. */
export const JOURNAL = join(OUT, 'proxy-bench.jsonl');
export const PRISM_DIR = join(OUT, 'prism');
export const PRISM_BIN = join(PRISM_DIR, 'node_modules', '.bin', 'prism');
/** The child servers of the benchmark, one script: `node --import tsx CHILD_SERVER ROLE [TARGET]`. */
export const CHILD_SERVER = join(packageRoot, 'bench', 'lib', 'child-server.ts');
