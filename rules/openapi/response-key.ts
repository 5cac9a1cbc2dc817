// Which of an operation's declared responses a status selects, as OpenAPI defines it: shared by the
// user's description and the kit's own (schemas/openapi.yaml, for the document's operations).

/** The response a status selects: its exact code, else its range ("4XX"), else `default`. */
export function responseKey(responses: Record<string, unknown>, status: number): string | undefined {
  const exact = String(status);
  if (exact in responses) return exact;
  const range = `${Math.floor(status / 100)}XX`;
  const rangeKey = Object.keys(responses).find((key) => key.toUpperCase() === range);
  if (rangeKey !== undefined) return rangeKey;
  return 'default' in responses ? 'default' : undefined;
}
