// schemas/scopes.yaml is the document's scope catalog, quirks included.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { schemasDir } from '../core/paths.ts';
import { catalogScopes, isCatalogScope, loadScopeCatalog } from '../rules/scopes.ts';

const { actions, resources } = loadScopeCatalog();
const documentText = readFileSync(join(schemasDir, 'tenant-management-api.md'), 'utf8');
const catalogSection = documentText.split('### Scope catalog')[1]!.split('## Events')[0]!;

const withActions = (...wanted: string[]) =>
  Object.entries(resources)
    .filter(([, a]) => a.length === wanted.length && wanted.every((w) => a.includes(w as never)))
    .map(([r]) => r);

describe('scope catalog', () => {
  it('has the four actions and the counts of each line of the document', () => {
    expect(actions).toEqual(['create', 'read', 'update', 'delete']);
    expect(Object.keys(resources)).toHaveLength(89);
    expect(withActions('create', 'read', 'update', 'delete')).toHaveLength(35);
    expect(withActions('create', 'read', 'delete')).toHaveLength(8);
    expect(withActions('create', 'read', 'update')).toHaveLength(3);
    expect(withActions('read', 'update', 'delete')).toHaveLength(4);
    expect(withActions('read', 'update')).toHaveLength(8);
    expect(withActions('read', 'delete')).toHaveLength(8);
    expect(withActions('create', 'delete')).toHaveLength(2);
    expect(withActions('read')).toHaveLength(15);
    expect(withActions('update')).toHaveLength(4);
    expect(withActions('create')).toHaveLength(2);
    expect(catalogScopes().size).toBe(35 * 4 + 8 * 3 + 3 * 3 + 4 * 3 + 8 * 2 + 8 * 2 + 2 * 2 + 15 + 4 + 2);
  });

  it('lists exactly the resources the document names, each under the line that names it', () => {
    // Each catalog line reads "<actions>: a, b, c." ("CRUD: …", "read only: …").
    const lines = catalogSection.split('\n').filter((l) => /^(?:CRUD|(?:create|read|update|delete)(?:, (?:create|read|update|delete))*(?: only)?): /.test(l));
    expect(lines).toHaveLength(10);
    const named = lines.flatMap((l) =>
      l
        .slice(l.indexOf(': ') + 2, -1)
        .replace('client_grants is CRUD above; also ', '')
        .split(', '),
    );
    expect(new Set(named).size).toBe(named.length);
    expect(new Set(named)).toEqual(new Set(Object.keys(resources)));
  });

  it('keeps the quirks: client_grants stays CRUD; the scopes the operations use are there', () => {
    expect(resources['client_grants']).toEqual(['create', 'read', 'update', 'delete']);
    expect(isCatalogScope('delete:token_exchange_profiles')).toBe(true);
    expect(isCatalogScope('update:sessions')).toBe(true);
    expect(isCatalogScope('read:resource_servers')).toBe(true);
    expect(isCatalogScope('create:sessions')).toBe(false);
    expect(isCatalogScope('update:client_grants')).toBe(true);
    expect(isCatalogScope('read:stats')).toBe(true);
    expect(isCatalogScope('update:stats')).toBe(false);
    expect(isCatalogScope('create:user_tickets')).toBe(true);
    expect(isCatalogScope('update:event_deliveries')).toBe(true);
  });
});
