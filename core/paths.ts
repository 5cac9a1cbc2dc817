// Where the kit's own data files live, whatever the current directory.
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const packageRoot: string = dirname(dirname(fileURLToPath(import.meta.url)));
export const schemasDir: string = join(packageRoot, 'schemas');
