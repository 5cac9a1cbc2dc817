// The exchanges in flight, in a list threaded through their Transits, and who waits for it to
// empty (a stop). Not a Set: with an add and a delete per exchange, a Set rehashes its table
// every few dozen exchanges, and each discarded table, in the old generation, still points at
// the exchanges in flight when it was replaced. Until the next full collection the
// young-generation collector takes those for alive, so nearly every exchange was promoted
// (about 4 KB each at full speed, measured with --trace-gc-nvp) and collected again by costly
// full collections. The list allocates nothing.
import type { Transit } from './transit.ts';

export class InFlightList {
  private first: Transit | undefined;
  size = 0;
  private emptyWaiters: Array<() => void> = [];

  add(transit: Transit): void {
    transit.previous = undefined;
    transit.next = this.first;
    if (this.first) this.first.previous = transit;
    this.first = transit;
    this.size++;
  }

  /** Removes `transit`; nothing when it is not in the list. */
  delete(transit: Transit): void {
    if (transit.previous) transit.previous.next = transit.next;
    else if (this.first === transit) this.first = transit.next;
    else return;
    if (transit.next) transit.next.previous = transit.previous;
    transit.previous = transit.next = undefined;
    this.size--;
  }

  /** The exchanges now in flight: a copy, so that they may leave the list while it is walked. */
  snapshot(): Transit[] {
    const transits: Transit[] = [];
    for (let transit = this.first; transit; transit = transit.next) transits.push(transit);
    return transits;
  }

  /** Resolves once the list is empty (notifyIfEmpty says when). */
  whenEmpty(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.emptyWaiters.push(resolve));
  }

  /** Called once a finished exchange has been handed on: wakes whenEmpty()'s waiters if it was the last. */
  notifyIfEmpty(): void {
    if (this.size === 0 && this.emptyWaiters.length > 0) {
      const waiters = this.emptyWaiters;
      this.emptyWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}
