// Runs the addons over each batch of finished flows, in order, synchronously. A failing step
// never takes the proxy down: the flow is marked with the error and goes on through the others.
import type { Addon, Flow } from '../flow.ts';

export class Pipeline {
  processed = 0;

  constructor(
    private readonly addons: Addon[],
    private readonly warn: (message: string) => void,
  ) {}

  run(batch: Flow[]): void {
    for (const flow of batch) {
      for (const addon of this.addons) {
        if (!addon.done) continue;
        try {
          addon.done(flow);
        } catch (error) {
          const message = `${addon.name}: ${(error as Error).message}`;
          if (flow.internalError === undefined) this.warn(`internal error on exchange ${flow.id} (${message}); the exchange is recorded without it`);
          flow.internalError = message;
        }
      }
      this.processed++;
    }
    for (const addon of this.addons) {
      try {
        addon.flush?.();
      } catch (error) {
        this.warn(`internal error in ${addon.name}: ${(error as Error).message}`);
      }
    }
  }
}
