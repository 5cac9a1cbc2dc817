// Where a requirement failed: per operation, the places in the documented body its findings named
// (rules/types.ts Finding.pointer: RFC 6901 JSON pointers), "" for a failure that named none. Kept
// for every failing exchange, not only the sampled evidence, so report.sarif has one result per
// place whichever exchanges the evidence kept. The builder and `report merge` bound them alike.
import type { RequirementResult } from './model.ts';

/**
 * Places kept per operation. Pointers come from the document's shape, so an operation has few;
 * beyond this many the rest are folded into "" and the operation is listed in `pointersFolded`.
 */
export const PLACES_PER_OPERATION = 16;

export class FailedPlaces {
  private readonly byOperation = new Map<string, Set<string>>();
  /** Operations whose places were folded into "" (in a report being merged). */
  private readonly folded = new Set<string>();

  add(operation: string, pointer: string): void {
    let places = this.byOperation.get(operation);
    if (!places) this.byOperation.set(operation, (places = new Set()));
    places.add(pointer);
  }

  /** An operation some of whose places were already folded into "" (it holds "" then). */
  addFolded(operation: string): void {
    this.folded.add(operation);
    this.add(operation, '');
  }

  /** Sets `pointers` (and `pointersFolded`) on `result`: each operation's places sorted, at most PLACES_PER_OPERATION; nothing when none were recorded. */
  writeTo(result: RequirementResult): void {
    if (this.byOperation.size === 0) return;
    const folded = new Set(this.folded);
    const pointers: Record<string, string[]> = {};
    for (const operation of [...this.byOperation.keys()].sort()) {
      const places = [...this.byOperation.get(operation)!].sort();
      if (places.length <= PLACES_PER_OPERATION) {
        pointers[operation] = places;
        continue;
      }
      // The first places in sorted order stay, so the same faults keep the same places.
      pointers[operation] = ['', ...places.filter((p) => p !== '').slice(0, PLACES_PER_OPERATION - 1)];
      folded.add(operation);
    }
    result.pointers = pointers;
    if (folded.size > 0) result.pointersFolded = [...folded].sort();
  }
}
