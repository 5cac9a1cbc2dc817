// The first SIGINT or SIGTERM, as a promise a command can race against its work. Listening
// replaces Node's default (exit at once), so a command can clean up before it stops.
export interface StopSignal {
  promise: Promise<NodeJS.Signals>;
  /** Stops listening (the work finished first). */
  dispose(): void;
}

export function stopSignal(): StopSignal {
  let stop!: (signal: NodeJS.Signals) => void;
  const promise = new Promise<NodeJS.Signals>((resolve) => {
    stop = (signal) => {
      dispose();
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
