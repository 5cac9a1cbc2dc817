// Where the proxy benchmark's files are: the kit's command, its output folder (git ignores it),
// the journal of (c), and the Prism it installs for (d).
import { join } from 'node:path';
import { packageRoot } from '../../core/paths.ts';

export const BIN = join(packageRoot, 'bin', 'tmi-conform.js');
export const OUT = join(packageRoot, 'bench', 'out');
/** Where (c) writes its journal, and (g), its TLS twin, its own. */
export const JOURNAL = join(OUT, 'proxy-bench.jsonl');
export const JOURNAL_TLS = join(OUT, 'proxy-bench-tls.jsonl');
/** The local CA and the one certificate both TLS variants present. */
export const TLS_DIR = join(OUT, 'tls');
export const PRISM_DIR = join(OUT, 'prism');
export const PRISM_BIN = join(PRISM_DIR, 'node_modules', '.bin', 'prism');
/** The child servers of the benchmark, one script: `node --import tsx CHILD_SERVER ROLE [TARGET]`. */
export const CHILD_SERVER = join(packageRoot, 'bench', 'lib', 'child-server.ts');
