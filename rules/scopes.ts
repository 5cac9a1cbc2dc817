// The document's scope catalog (schemas/scopes.yaml), loaded once.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { schemasDir } from '../core/paths.ts';

export type Action = 'create' | 'read' | 'update' | 'delete';

export interface ScopeCatalog {
  actions: Action[];
  /** resource -> the actions the document lists for it */
  resources: Record<string, Action[]>;
}

let catalog: ScopeCatalog | undefined;
let scopes: Set<string> | undefined;

export function loadScopeCatalog(): ScopeCatalog {
  catalog ??= parse(readFileSync(join(schemasDir, 'scopes.yaml'), 'utf8')) as ScopeCatalog;
  return catalog;
}

/** Every `<action>:<resource>` scope the catalog lists. */
export function catalogScopes(): Set<string> {
  if (!scopes) {
    const { resources } = loadScopeCatalog();
    scopes = new Set(Object.entries(resources).flatMap(([resource, actions]) => actions.map((a) => `${a}:${resource}`)));
  }
  return scopes;
}

export const isCatalogScope = (scope: string): boolean => catalogScopes().has(scope);
