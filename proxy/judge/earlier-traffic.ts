// Resuming a journal (`proxy --append`): the exchanges it already holds are judged again, as
// `validate` judges a recording, so that the counts and the report written at stop cover the
// earlier sessions as well as this one. The journal streams in batches: its size does not matter.
import { judgeRecording } from '../../recordings/judge-recording.ts';
import type { Judgement, RateLimitTracker } from '../../rules/index.ts';
import type { Exchange } from '../../rules/types.ts';
import type { ApiLayout } from '../../rules/api-layout.ts';
import { markNonGlobalClient } from './judge.ts';

/**
 * Judges every exchange of the journal at `path` (or of its segments, in order: one recording) and hands it to `add`, in order; returns how
 * many. An exchange the judge fails on comes without a judgement (as in the live pipeline), and
 * `warn` hears of the first such failure.
 */
export async function judgeEarlierTraffic(
  path: string | readonly string[],
  nonGlobalClients: ReadonlySet<string>,
  add: (exchange: Exchange, judgement: Judgement | undefined) => void,
  warn: (message: string) => void,
  layout?: ApiLayout,
  tracker?: RateLimitTracker,
): Promise<number> {
  let failed = 0;
  return judgeRecording(
    path,
    {
      ...(layout ? { layout } : {}),
      ...(tracker ? { tracker } : {}),
      beforeJudging: (batch) => {
        for (const exchange of batch) markNonGlobalClient(exchange, nonGlobalClients);
      },
      onJudgeError: (exchange, error) => {
        if (failed++ === 0) warn(`internal error judging earlier exchange ${exchange.id} of ${typeof path === 'string' ? path : path.join(', ')} (${(error as Error).message}); it is counted but not judged`);
      },
    },
    add,
  );
}
