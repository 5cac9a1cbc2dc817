// A requirement's entry in a report: the catalog's words about it, then what its evidence says.
// One shape for the builder and `report merge`.
import type { RequirementFacts, RequirementResult } from './model.ts';

type Outcome = Pick<RequirementResult, 'status' | 'coverage' | 'counts' | 'evidence'>;

export function requirementResult(about: RequirementFacts, { status, coverage, counts, evidence }: Outcome): RequirementResult {
  const result: RequirementResult = {
    id: about.id,
    level: about.level,
    subject: about.subject,
    operations: about.operations,
    section: about.section,
    title: about.title,
    quote: about.quote,
    status,
    coverage,
    counts,
    evidence,
  };
  if (about.inferred !== undefined) result.inferred = about.inferred;
  return result;
}
