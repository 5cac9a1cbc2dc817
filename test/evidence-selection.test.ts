// Which failures a report keeps as a requirement's evidence: at most EVIDENCE_PER_REQUIREMENT,
// the first of each kind (each token attack, else each test) before any repeat, whatever order
// they arrived in. Tests run side by side interleave their exchanges, and a report must still
// show every attack a target let through.
import { describe, expect, it } from 'vitest';
import { deleteExchange } from '../fixtures/exchanges.ts';
import { ReportBuilder } from '../reports/builder.ts';
import { EVIDENCE_PER_REQUIREMENT } from '../reports/evidence-limits.ts';
import { judgeExchange, RateLimitTracker } from '../rules/index.ts';
import type { TokenAttack } from '../rules/types.ts';

const REQUIREMENT = 'AUTH-CREDENTIAL-REQUIRED';
const ATTACKS: TokenAttack[] = ['corrupted-signature', 'unsigned', 'tampered-scope', 'key-confusion', 'foreign-key', 'other-issuer', 'expired'];

/** A DELETE the target carried out (204) with a token made by `attack`, from test `test`. */
function carriedOut(builder: ReportBuilder, attack: TokenAttack | undefined, test: string): void {
  const exchange = deleteExchange({ tokenFacts: { signatureValid: false, ...(attack ? { attack } : {}) } });
  const judgement = judgeExchange(exchange, new RateLimitTracker());
  expect(judgement.findings.map((f) => f.requirement)).toContain(REQUIREMENT);
  builder.addExchange(exchange, judgement, test);
}

function keptFailures(builder: ReportBuilder) {
  const result = builder.build({ failOn: 'must' }).requirements.find((r) => r.id === REQUIREMENT)!;
  expect(result.status).toBe('fail');
  return result.evidence.filter((e) => e.status === 'fail');
}

describe("a requirement's failures kept as evidence", () => {
  it('every attack is kept though repeats of the first came before them, within the limit', () => {
    const builder = new ReportBuilder({ kind: 'run', source: 'run' });
    for (let i = 0; i < 12; i++) carriedOut(builder, 'unsigned', 'attacks > unsigned');
    for (const attack of ATTACKS) carriedOut(builder, attack, `attacks > ${attack}`);
    const kept = keptFailures(builder);
    expect(kept).toHaveLength(EVIDENCE_PER_REQUIREMENT);
    expect(new Set(kept.map((e) => e.exchange?.credential?.attack))).toEqual(new Set(ATTACKS));
    // Only repeats made room: two of the unsigned exchanges are still kept.
    expect(kept.filter((e) => e.exchange?.credential?.attack === 'unsigned')).toHaveLength(2);
  });

  it('beyond the limit, every attack a target let through is still kept, once each', () => {
    const catalogue: TokenAttack[] = [
      ...ATTACKS,
      'alg-none-capitalized',
      'signature-empty',
      'zero-signature',
      'psychic-es256',
      'embedded-jwk',
      'jku',
      'kid-sql-injection',
      'hs256-weak-secret',
    ];
    const builder = new ReportBuilder({ kind: 'run', source: 'run' });
    for (const attack of [...catalogue, ...catalogue]) carriedOut(builder, attack, `attacks > ${attack}`);
    const kept = keptFailures(builder).map((e) => e.exchange?.credential?.attack);
    expect(kept).toHaveLength(catalogue.length);
    expect(new Set(kept)).toEqual(new Set(catalogue));
  });

  it('interleaved in any order, the kinds kept are the same', () => {
    const orders = [
      ATTACKS.flatMap((a) => [a, a, a]),
      [...ATTACKS, ...ATTACKS, ...ATTACKS].reverse(),
      ATTACKS.flatMap((a, i) => Array.from({ length: i + 1 }, () => a)),
    ];
    for (const order of orders) {
      const builder = new ReportBuilder({ kind: 'run', source: 'run' });
      for (const attack of order) carriedOut(builder, attack, `attacks > ${attack}`);
      expect(new Set(keptFailures(builder).map((e) => e.exchange?.credential?.attack))).toEqual(new Set(ATTACKS));
    }
  });

  it('without attacks, one per test before any repeat; with fewer kinds than room, the first failures as they came', () => {
    const many = new ReportBuilder({ kind: 'proxy', source: 'proxy' });
    for (let i = 0; i < 10; i++) carriedOut(many, undefined, 'the first test');
    for (let t = 2; t <= 5; t++) carriedOut(many, undefined, `test ${t}`);
    const kept = keptFailures(many);
    expect(kept).toHaveLength(EVIDENCE_PER_REQUIREMENT);
    expect(kept.map((e) => e.test)).toEqual([...Array.from({ length: 4 }, () => 'the first test'), 'test 2', 'test 3', 'test 4', 'test 5']);

    const few = new ReportBuilder({ kind: 'proxy', source: 'proxy' });
    for (let i = 0; i < 10; i++) carriedOut(few, 'unsigned', 'one test');
    expect(keptFailures(few)).toHaveLength(EVIDENCE_PER_REQUIREMENT);
  });
});
