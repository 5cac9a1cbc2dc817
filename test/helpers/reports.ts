// A validate report of exchanges judged as validate judges them: for tests of what is made of a
// report (baselines, diffs, matrices, annotations).
import { ReportBuilder } from '../../reports/builder.ts';
import type { Report } from '../../reports/model.ts';
import { getExchange, resourceServer } from '../../fixtures/exchanges.ts';
import { judgeExchange } from '../../rules/index.ts';

/** The report of one read of a resource server whose body is the conforming one with `body` over it ({ signing_alg: 'HS512' }: RS-SIGNING-ALG fails). */
export function reportOfRead(body: Record<string, unknown> = {}): Report {
  const builder = new ReportBuilder({ kind: 'validate', source: 'test' });
  const exchange = getExchange(resourceServer(body));
  builder.addExchange(exchange, judgeExchange(exchange));
  return builder.build({ failOn: 'must' });
}
