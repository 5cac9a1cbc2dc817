// How much evidence a report keeps per requirement: enough to show and reproduce what happened,
// bounded however much traffic the report covers. Failures come first, then passes.

/** Failures kept per requirement (failing exchanges and tests), the first ones: enough to see a pattern, few enough to read. */
export const EVIDENCE_PER_REQUIREMENT = 8;
/** Passes kept per requirement (a passing test adds one while fewer are kept; `report merge` keeps this many across sources): a few show what conformed. */
export const PASSING_EVIDENCE_PER_REQUIREMENT = 4;
/** A passing exchange adds one only while fewer passes than this are kept: a proxy's thousands would only repeat each other, and leave room for tests. */
export const PASSING_EXCHANGES_PER_REQUIREMENT = 2;
