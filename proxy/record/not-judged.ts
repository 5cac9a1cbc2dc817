// Says on the console, once per reason, when an exchange was first not judged in whole or in
// part (a body nested too deep, a body over the body limit, a schema of the user's OpenAPI
// description that cannot be compiled): the reports at stop count every such exchange, but a
// proxy may run for days, and what it cannot judge should be known while it runs.
import type { Judgement } from '../../rules/index.ts';
import type { Exchange } from '../../rules/types.ts';
import { notJudgedReasons } from '../../reports/traffic.ts';
import type { Addon, Flow } from '../flow.ts';

export class NotJudgedAddon implements Addon {
  readonly name = 'not-judged';
  private readonly said = new Set<string>();

  constructor(private readonly warn: (message: string) => void) {}

  done(flow: Flow): void {
    if (flow.exchange && flow.judgement) this.met(flow.exchange, flow.judgement);
  }

  /** An exchange of an earlier session, judged again from a resumed journal. */
  earlier(exchange: Exchange, judgement: Judgement | undefined): void {
    if (judgement) this.met(exchange, judgement);
  }

  private met(exchange: Exchange, judgement: Judgement): void {
    if (!judgement.operation) return;
    for (const reason of notJudgedReasons(judgement)) {
      if (this.said.has(reason)) continue;
      this.said.add(reason);
      this.warn(`not judged: ${reason} (first met in exchange ${exchange.id ?? '(no id)'}; the reports count every exchange it holds for)`);
    }
  }
}
