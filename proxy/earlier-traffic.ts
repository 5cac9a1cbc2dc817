// Resuming a journal (`proxy --append`): the exchanges it already holds are judged again, as
// `validate` judges a recording, so that the counts and the report written at stop cover the
// earlier sessions as well as this one. The journal streams in batches: its size does not matter.
import { readRecordingBatches } from '../recordings/read.ts';
import { judgeExchange, RateLimitTracker, type Judgement } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';
import { markNonGlobalClient } from './judge.ts';

/**
 * Judges every exchange of the journal at `path` and hands it to `add`, in order; returns how
 * many. An exchange the judge fails on comes without a judgement (as in the live pipeline), and
 * `warn` hears of the first such failure.
 */
export async function judgeEarlierTraffic(
  path: string,
  nonGlobalClients: ReadonlySet<string>,
  add: (exchange: Exchange, judgement: Judgement | undefined) => void,
  warn: (message: string) => void,
): Promise<number> {
  // The rate-limit history of earlier sessions is their own: a pause lies between them and this one.
  const tracker = new RateLimitTracker();
  let count = 0;
  let failed = 0;
  for await (const batch of readRecordingBatches(path)) {
    for (const exchange of batch) {
      markNonGlobalClient(exchange, nonGlobalClients);
      let judgement: Judgement | undefined;
      try {
        judgement = judgeExchange(exchange, tracker);
      } catch (error) {
        if (failed++ === 0) warn(`internal error judging earlier exchange ${exchange.id} of ${path} (${(error as Error).message}); it is counted but not judged`);
      }
      add(exchange, judgement);
      count++;
    }
  }
  return count;
}
