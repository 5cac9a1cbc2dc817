// The requirements catalog (schemas/requirements.yaml), loaded once.
import { readKitYaml } from '../core/kit-documents.ts';
import type { Level, Subject } from './types.ts';
import { once } from '../core/memo.ts';

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
}

const catalog = once(() => {
  const { requirements } = readKitYaml('requirements.yaml') as { requirements: Requirement[] };
  return { requirements, byId: new Map(requirements.map((r) => [r.id, r])) };
});

export function loadRequirements(): Requirement[] {
  return catalog().requirements;
}

export function requirement(id: string): Requirement {
  const found = catalog().byId.get(id);
  if (!found) throw new Error(`unknown requirement id ${id}`);
  return found;
}
