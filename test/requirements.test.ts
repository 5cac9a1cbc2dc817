// The requirements catalog keeps the document's words, and every requirement is judged by a
// check that names it back.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checksOf, CHECKS as EXCHANGE_CHECKS, PROBE_CHECKS } from '../rules/checks/index.ts';
import { schemasDir } from '../core/paths.ts';
import { loadRequirements } from '../rules/requirements.ts';

const requirements = loadRequirements();
// Checks of one exchange, and checks over the preflight's probes of one operation.
const CHECKS: Array<{ name: string; requirements: string[] }> = [...EXCHANGE_CHECKS, ...PROBE_CHECKS];
const documentText = readFileSync(join(schemasDir, 'tenant-management-api.md'), 'utf8');
const normalize = (text: string) => text.replace(/\s+/g, ' ');

describe('requirements catalog', () => {
  it('has unique ids, valid levels and subjects, and says why for every inferred requirement', () => {
    const ids = requirements.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of requirements) {
      expect(['must', 'should'], r.id).toContain(r.level);
      expect(['implementation', 'client', 'both'], r.id).toContain(r.subject);
      expect(r.title.length, r.id).toBeGreaterThan(5);
      if (r.level === 'should') expect(r.inferred, `${r.id} is inferred: say why`).toBeTruthy();
      else expect(r.inferred, `${r.id} is stated: no inference`).toBeUndefined();
    }
  });

  it('quotes the document verbatim', () => {
    const text = normalize(documentText);
    for (const r of requirements) {
      for (const excerpt of r.quote.split(' … ')) expect(text.includes(normalize(excerpt)), `${r.id}: "${excerpt}"`).toBe(true);
    }
  });

  it('never makes a must of what the document leaves "not shown"', () => {
    for (const r of requirements.filter((x) => x.level === 'must')) expect(r.quote, r.id).not.toMatch(/not shown/);
  });

  it('every requirement has a check, and every check names only requirements of the catalog (a check names its requirements once, in rules/checks/)', () => {
    for (const r of requirements) expect(checksOf(r.id).length, `${r.id} has no check`).toBeGreaterThan(0);
    const ids = new Set(requirements.map((r) => r.id));
    for (const check of CHECKS) {
      expect(check.requirements.length, `${check.name} names no requirement`).toBeGreaterThan(0);
      for (const id of check.requirements) expect(ids.has(id), `${check.name} names unknown requirement ${id}`).toBe(true);
    }
    expect(checksOf('TEP-DELETE-NO-BODY')).toEqual(['noContentHasNoBody']);
  });

  it('every check is a named function (its name says what it checks)', () => {
    const names = CHECKS.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z][A-Za-z0-9]+$/);
  });
});
