// Resuming a journal (`proxy --append`): the exchanges it already holds are replayed through the
// proxy's judging session (judging/session.ts), as `validate` replays a recording, so that the
// counts and the report written at stop cover the earlier sessions as well as this one, and the
// rate-limit history goes on from them. The journal streams in batches: its size does not matter.
import type { JudgingSession } from '../../judging/session.ts';
import type { Judgement } from '../../rules/index.ts';
import type { Exchange } from '../../rules/types.ts';

/**
 * Judges every exchange of the journal at `path` (or of its segments, in order: one recording) and
 * hands it to `add`, in order; returns how many. An exchange the kit fails on comes without a
 * judgement (as in the live pipeline), and `warn` hears of the first such failure.
 */
export async function judgeEarlierTraffic(
  session: JudgingSession,
  path: string | readonly string[],
  add: (exchange: Exchange, judgement: Judgement | undefined) => void,
  warn: (message: string) => void,
): Promise<number> {
  let failed = 0;
  return session.replay(path, {}, (exchange, judgement) => {
    if (!judgement && failed++ === 0) {
      warn(
        `internal error judging earlier exchange ${exchange.id} of ${typeof path === 'string' ? path : path.join(', ')} (${session.lastInternalError}); it is counted but not judged`,
      );
    }
    add(exchange, judgement);
  });
}
