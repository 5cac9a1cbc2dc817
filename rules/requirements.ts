// The requirements catalog (schemas/requirements.yaml), loaded once.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { schemasDir } from '../core/paths.ts';
import type { Level, Subject } from './types.ts';

export interface Requirement {
  id: string;
  level: Level;
  subject: Subject | 'both';
  /** Operation ids, or "all". */
  operations: string[];
  section: string;
  title: string;
  quote: string;
  /** For `should`: why the kit expects it although the document does not state it. */
  inferred?: string;
  /** Names of the rule-engine checks that judge it. */
  checks: string[];
}

let catalog: Requirement[] | undefined;
let byId: Map<string, Requirement> | undefined;

export function loadRequirements(): Requirement[] {
  if (!catalog) {
    const doc = parse(readFileSync(join(schemasDir, 'requirements.yaml'), 'utf8')) as { requirements: Requirement[] };
    catalog = doc.requirements;
    byId = new Map(catalog.map((r) => [r.id, r]));
  }
  return catalog;
}

export function requirement(id: string): Requirement {
  loadRequirements();
  const found = byId!.get(id);
  if (!found) throw new Error(`unknown requirement id ${id}`);
  return found;
}
