// What a user's description (--openapi) declares that traffic can exercise, for the reports'
// coverage: its operations and, per operation, the statuses its responses name (exact codes and
// ranges such as "4XX" as written; `default` names no status, so it is never missing), and what
// one exchange exercised of it. Plain, frozen data: a judgement carries it to the report builder.

/** One operation of the description and the statuses it declares. */
export interface DescribedOperationFrame {
  /** "GET /users/{id}": the method and the key under `paths`. */
  readonly operation: string;
  readonly operationId?: string;
  /** The response keys other than `default`: "200", "404", "4XX". */
  readonly statuses: readonly string[];
}

/** What a description declares, made once per description. */
export interface DescriptionFrame {
  /** `info.title` and `info.version`, when it states them: how the reports name it. */
  readonly title?: string;
  readonly version?: string;
  readonly operations: readonly DescribedOperationFrame[];
}

/** What one exchange exercised of the description: the operation it matched and the declared status its response selected, if any. */
export interface DescribedCall {
  readonly frame: DescriptionFrame;
  /** DescribedOperationFrame.operation; absent: the exchange matched no operation of the description. */
  readonly operation?: string;
  /** The declared status key the response selected ("404", "4XX"); absent: none but `default`, or no response. */
  readonly status?: string;
}
