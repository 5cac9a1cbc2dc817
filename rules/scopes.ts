// The document's scope catalog (schemas/scopes.yaml), loaded once.
import { readKitYaml } from '../core/kit-documents.ts';
import { once } from '../core/memo.ts';

export type Action = 'create' | 'read' | 'update' | 'delete';

export interface ScopeCatalog {
  actions: Action[];
  /** resource -> the actions the document lists for it */
  resources: Record<string, Action[]>;
}

export const loadScopeCatalog = once((): ScopeCatalog => readKitYaml('scopes.yaml') as ScopeCatalog);

/** Every `<action>:<resource>` scope the catalog lists. */
export const catalogScopes = once((): ReadonlySet<string> => {
  const { resources } = loadScopeCatalog();
  return new Set(Object.entries(resources).flatMap(([resource, actions]) => actions.map((a) => `${a}:${resource}`)));
});

export const isCatalogScope = (scope: string): boolean => catalogScopes().has(scope);
