// --min-coverage (and the run config's `coverage:`), as run, proxy, validate and report merge take
// it: read before anything starts (a bad value is a usage error, exit 2), checked on the report
// the command made: below it, one line on stderr and exit 1.
import type { CoveragePart } from '../reports/coverage.ts';
import { belowCoverageGate, parseMinCoverage, type CoverageGate } from '../reports/coverage-gate.ts';
import type { Report } from '../reports/model.ts';
import { EXIT_FAILED, EXIT_OK } from '../core/errors.ts';

/** `parts`: those the command can count (run: the document's; the others: the description's too). */
export function coverageGateOption(given: string | number | undefined, where: string, parts?: readonly CoveragePart[]): CoverageGate | undefined {
  return given === undefined ? undefined : parseMinCoverage(given, where, parts);
}

/** The exit code with the gate applied: a report that passed but is below it exits 1, its one line said on stderr. */
export function exitWithCoverageGate(code: number, report: Report, gate: CoverageGate | undefined, command: string): number {
  if (gate === undefined) return code;
  const below = belowCoverageGate(report, gate);
  if (below === undefined) return code;
  process.stderr.write(`tmi-conform ${command}: ${below}\n`);
  return code === EXIT_OK ? EXIT_FAILED : code;
}
