// How much evidence a report keeps per requirement: enough to show and reproduce what happened,
// bounded so that a day of proxy traffic makes a report of the same size as one run.

/** Failures kept per requirement (failing exchanges and tests): the first ones, each with its exchange. */
export const EVIDENCE_PER_REQUIREMENT = 8;
/** Passes kept per requirement once a passing test adds one: a few tests show what conformed. */
export const PASSING_EVIDENCE_PER_REQUIREMENT = 4;
/** A passing exchange is kept only while fewer passes than this are: thousands of them would only repeat each other. */
export const PASSING_EXCHANGES_PER_REQUIREMENT = 2;
