// What the proxy could not judge reaches its console and its reports: each reason said live once,
// when first met, and an exchange the kit failed on listed among those not judged.
import { describe, expect, it } from 'vitest';
import { getExchange } from '../fixtures/exchanges.ts';
import type { Flow } from '../proxy/flow.ts';
import { NotJudgedAddon } from '../proxy/record/not-judged.ts';
import { ReportAddon } from '../proxy/record/report.ts';
import { INTERNAL_ERROR } from '../reports/traffic.ts';
import { judgeExchange } from '../rules/index.ts';
import { JudgingSession } from '../judging/session.ts';
import { TenantTokens } from '../keys/tenant.ts';

const deep = (id: string) => {
  const exchange = { ...getExchange(undefined, `rs_${id}`, { responseBody: '['.repeat(100) + ']'.repeat(100) }), id };
  return { id: Number(id), exchange, judgement: judgeExchange(exchange) } as unknown as Flow;
};

describe('the proxy: what it could not judge', () => {
  it('each reason is said once, when first met, naming the exchange', () => {
    const said: string[] = [];
    const addon = new NotJudgedAddon((line) => said.push(line));
    for (const id of ['1', '2', '3']) addon.done(deep(id));
    addon.done({ id: 4, exchange: { ...getExchange(), id: '4' }, judgement: judgeExchange(getExchange()) } as unknown as Flow);
    expect(said).toEqual(['not judged: response body nested deeper than 64 levels (first met in exchange 1; the reports count every exchange it holds for)']);
  });

  it('an exchange the kit failed on is in the report, among those not judged', () => {
    const report = new ReportAddon(
      new JudgingSession({ tenant: new TenantTokens({}), report: { kind: 'proxy', source: 'proxy', target: 'http://127.0.0.1:1' } }),
    );
    report.done({ id: 9, internalError: 'boom' } as unknown as Flow);
    expect(report.builder.build({ failOn: 'must' }).traffic?.notJudged).toEqual([{ reason: INTERNAL_ERROR, count: 1, exchanges: ['9'] }]);
  });
});
