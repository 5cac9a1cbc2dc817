// How a suite test fails: in the kit's words (what was expected, what was received, and the
// exchange: method, URL, status), never the test runner's assertion text. A property-based
// test that fails is reported with its failing run's words and fast-check's shrunk
// counterexample beneath them.
import { NOT_RUN_INTERRUPTED } from '../reports/status.ts';
import type { Exchange } from '../rules/types.ts';
import { redactExchange } from '../core/redact.ts';

/** A suite expectation that the target did not meet. Its message is what the user reads. */
export class ConformanceFailure extends Error {
  override name = 'ConformanceFailure';
}

/** What a request or a wait of the run's client throws once the run is interrupted: the test did not run to its end. */
export class RunInterrupted extends Error {
  override name = 'RunInterrupted';
  constructor() {
    super(NOT_RUN_INTERRUPTED);
  }
}

/** Characters of a response body quoted in a failure. */
const BODY_CHARS = 200;

/** "GET http://…/resource-servers/rs_1 → 404 {"statusCode":404,…}": what was sent, what came back. */
export function exchangeLine(exchange: Exchange): string {
  const { method, url } = exchange.request;
  const response = exchange.response;
  if (!response) return `${method} ${url} → no response${exchange.error ? ` (${exchange.error})` : ''}`;
  const text = response.body?.text ?? '';
  const body = text.length > BODY_CHARS ? `${text.slice(0, BODY_CHARS)}…` : text;
  return `${method} ${url} → ${response.status}${body === '' ? '' : ` ${body.replace(/\s*\n\s*/g, ' ')}`}`;
}

/** The answer's status (or that none came), as "received"; the exchange line beneath quotes its body. */
export function receivedAnswer(exchange: Exchange): string {
  const response = exchange.response;
  if (!response) return `no response${exchange.error ? ` (${exchange.error})` : ''}`;
  return String(response.status);
}

/** The failure's text: one line per unmet expectation, then the exchange it concerns, redacted (its body may echo the token, wrapped). */
export function failureText(lines: string[], exchange: Exchange): string {
  return `${lines.join('\n')}\n  ${exchangeLine(redactExchange(exchange))}`;
}

/** What fast-check's failure text says, for the report. */
export interface PropertyFailure {
  /** The shrunk counterexample, as fast-check prints it. */
  counterexample: string;
  shrunk?: number;
  /** fast-check's own seed and path: with them, fc.assert replays this one failure. */
  seed?: string;
  path?: string;
}

const PROPERTY_FAILED = /^Property failed after \d+ tests?/;

/** fast-check's failure text, read: undefined when `message` is not one. */
export function readPropertyFailure(message: string): PropertyFailure | undefined {
  if (!PROPERTY_FAILED.test(message)) return undefined;
  const counterexample = /^Counterexample: (.*)$/m.exec(message)?.[1];
  if (counterexample === undefined) return undefined;
  const failure: PropertyFailure = { counterexample };
  const shrunk = /^Shrunk (\d+) time/m.exec(message)?.[1];
  if (shrunk !== undefined) failure.shrunk = Number(shrunk);
  const replay = /^\{ seed: (-?\d+), path: "([^"]*)"/m.exec(message);
  if (replay) {
    failure.seed = replay[1]!;
    failure.path = replay[2]!;
  }
  return failure;
}

/** One test error as the report shows it: the kit's words first, a property's counterexample beneath. */
export function describeTestError(error: { message: string; cause?: unknown }): { message: string; counterexample?: string } {
  const property = readPropertyFailure(error.message);
  const cause = (error.cause as { message?: unknown } | undefined)?.message;
  if (!property) return { message: error.message };
  // fast-check puts the failing run's own error in `cause`, beneath its counterexample.
  const words = typeof cause === 'string' && cause !== '' ? cause : error.message.split('\n')[0]!;
  const how = [
    property.shrunk !== undefined ? `shrunk ${property.shrunk} time(s)` : undefined,
    property.seed !== undefined ? `fast-check seed ${property.seed}, path "${property.path}"` : undefined,
  ]
    .filter(Boolean)
    .join('; ');
  return { message: `${words}\n  counterexample: ${property.counterexample}${how ? ` (${how})` : ''}`, counterexample: property.counterexample };
}
