// The kit's own YAML documents (schemas/*.yaml), parsed. The compiled kit (scripts/compiled.mjs)
// holds each as JSON in dist/schemas/, made from exactly the YAML beside it: parsing the YAML took
// 60 to 90 ms in every process that judges (the command and the suites' worker), JSON a tenth.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { packageRoot, runsCompiled, schemasDir } from './paths.ts';

/** `schemas/NAME` parsed: e.g. `readKitYaml('requirements.yaml')`. */
export function readKitYaml(name: string): unknown {
  if (runsCompiled) return JSON.parse(readFileSync(join(packageRoot, 'dist', 'schemas', name.replace(/\.yaml$/, '.json')), 'utf8'));
  return parse(readFileSync(join(schemasDir, name), 'utf8'));
}
