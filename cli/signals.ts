// The first SIGINT or SIGTERM, as a promise a command can race against its work. Listening
// replaces Node's default (exit at once), so a command can clean up before it stops.
export interface StopSignal {
  promise: Promise<NodeJS.Signals>;
  /** Stops listening (the work finished first). */
  dispose(): void;
}

/**
 * `again`: called on a second SIGINT or SIGTERM, while the command stops after the first (it
 * exits at once); without it, a second signal has Node's default (exit at once).
 */
export function stopSignal(again?: (signal: NodeJS.Signals) => void): StopSignal {
  let stop!: (signal: NodeJS.Signals) => void;
  const promise = new Promise<NodeJS.Signals>((resolve) => {
    stop = (signal) => {
      dispose();
      if (again) {
        process.once('SIGINT', again);
        process.once('SIGTERM', again);
      }
      resolve(signal);
    };
  });
  const dispose = () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return { promise, dispose };
}

/**
 * Every SIGINT and SIGTERM in turn (and whatever else is pushed as one, such as the launcher
 * going away), for a command that reacts to more than the first: stop, then hurry, or pass
 * each on to a child. A signal that arrives while nobody waits is kept for the next wait.
 */
export class SignalQueue {
  private readonly queued: NodeJS.Signals[] = [];
  private readonly waiting: Array<(signal: NodeJS.Signals) => void> = [];
  private readonly onSignal = (signal: NodeJS.Signals) => this.push(signal);

  /** `listen`: take the process's SIGINT and SIGTERM (replacing Node's default, exit at once). */
  constructor(private readonly listen: boolean) {
    if (!listen) return;
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
  }

  push(signal: NodeJS.Signals): void {
    const waiter = this.waiting.shift();
    if (waiter) waiter(signal);
    else this.queued.push(signal);
  }

  /** The next signal not yet taken. */
  next(): Promise<NodeJS.Signals> {
    const signal = this.queued.shift();
    if (signal !== undefined) return Promise.resolve(signal);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  dispose(): void {
    if (!this.listen) return;
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
  }
}
