// Where the kit's own data files live, whatever the current directory.
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** Whether the kit runs its compiled form from dist/ (scripts/compiled.mjs) rather than its TypeScript. */
export const runsCompiled: boolean = import.meta.url.endsWith('.js');
const here = dirname(fileURLToPath(import.meta.url));
// This module is core/paths.ts, or dist/core/paths.js.
export const packageRoot: string = runsCompiled ? dirname(dirname(here)) : dirname(here);
export const schemasDir: string = join(packageRoot, 'schemas');
