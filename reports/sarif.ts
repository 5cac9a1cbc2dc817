// report.sarif: the report as a SARIF 2.1.0 log, for GitHub code scanning and other SARIF
// viewers, which show each result as an alert and track it from one run to the next.
//
// One rule per requirement of the report; one result per failed or warned requirement and
// operation it failed on. A runtime finding has no source line, so a result is located in the
// document the requirement quotes: schemas/tenant-management-api.md, at the line of the quote,
// with the document's section as its logical location. That file ships in the tmi-conform
// package, not in the user's repository, so its location is relative to the base id TMI_CONFORM
// (the package root), never to %SRCROOT%: a code scanning upload reads a relative path as one in
// the repository, lists the alert with the document's path and line, and has no file to show.
//
// A failed operation has one result per place of the body its failures named (the requirement's
// `pointers`: RFC 6901 JSON pointers into the documented shape, "" for a failure that named none),
// so two broken fields are two alerts, each fixed on its own.
//
// Alerts are told apart across runs by `partialFingerprints`: a hash of the requirement, the
// operation and the place only, nothing a run changes (times, ports, exchange ids, seeds, the
// keys of generated bodies). Beside it stays the key of earlier versions, the hash of the
// requirement and the operation, with its old value: a viewer that compares the keys two results
// share matches an alert of an earlier version to the results of its requirement and operation,
// and tells the places apart by the new key. A failure accepted by a baseline is a result with
// an external suppression carrying the baseline's reason. Everything from an exchange comes from
// the model's evidence, already redacted.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Invocation, Location, Log, Notification, ReportingDescriptor, Result } from 'sarif';
import { once, perKey } from '../core/memo.ts';
import { schemasDir } from '../core/paths.ts';
import { version } from '../core/version.ts';
import type { Evidence, Report, RequirementResult } from './model.ts';
import { INTERRUPTED_VERDICT, interruptedSources } from './status.ts';
import { statusOn } from './operations.ts';
import { notJudgedLine } from './console.ts';

const SARIF_SCHEMA = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json';
const INFORMATION_URI = 'https://www.npmjs.com/package/tmi-conform';
const DOCUMENT = 'schemas/tenant-management-api.md';
/** The base id of the document's location: the root of the tmi-conform package that wrote the log. */
const PACKAGE_ROOT = 'TMI_CONFORM';
/** The keys of the fingerprints, versioned: a change to what they hash gets a new key, not silently new alerts. */
const FINGERPRINT = 'tmiConformRequirementOperationPointer/v1';
/**
 * GitHub's severity of a security alert (0.1–3.9 low, 4.0–6.9 medium, 7.0–8.9 high, 9.0+
 * critical): a request carried out that a stated rule says to refuse is high, one an inferred
 * rule says to refuse is medium.
 */
const SECURITY_SEVERITY = { must: '8.0', should: '5.0' } as const;

interface Region {
  startLine: number;
  startColumn: number;
  endLine: number;
  endColumn: number;
}

/**
 * The document with its white space runs collapsed to one space (as the catalog's quotes are
 * compared with it), each character's offset in the original text, and where each line starts.
 */
const documentIndex = once(() => {
  const text = readFileSync(join(schemasDir, 'tenant-management-api.md'), 'utf8');
  let normalized = '';
  const offsets: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const white = /\s/.test(text[i]!);
    if (white && normalized.endsWith(' ')) continue;
    normalized += white ? ' ' : text[i];
    offsets.push(i);
  }
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  return { normalized, offsets, lineStarts };
});

/** 1-based line and column of an offset in the document. */
function position(lineStarts: readonly number[], offset: number): { line: number; column: number } {
  let line = 0;
  while (line + 1 < lineStarts.length && lineStarts[line + 1]! <= offset) line++;
  return { line: line + 1, column: offset - lineStarts[line]! + 1 };
}

/**
 * Where a quote stands in the document: its first excerpt (" … " separates excerpts), white
 * space aside. Undefined when the document does not hold it (a merged report of another version).
 */
const quoteRegion = perKey(512, (quote: string): Region | undefined => {
  const excerpt = quote.split(' … ')[0]!.trim().replace(/\s+/g, ' ');
  const { normalized, offsets, lineStarts } = documentIndex();
  const at = excerpt === '' ? -1 : normalized.indexOf(excerpt);
  if (at === -1) return undefined;
  const start = position(lineStarts, offsets[at]!);
  const end = position(lineStarts, offsets[at + excerpt.length - 1]!);
  return { startLine: start.line, startColumn: start.column, endLine: end.line, endColumn: end.column + 1 };
});

/** A security finding is among its evidence: the target carried out a request it should have refused. */
const isSecurity = (r: RequirementResult): boolean => (r.counts.security ?? 0) > 0;

/** GEN-JSON-RESPONSE → GenJsonResponse: the rule's name, an identifier as SARIF asks. */
const ruleName = (id: string): string =>
  id
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

function rule(r: RequirementResult): ReportingDescriptor {
  const help = r.inferred ? `${r.quote}\n\nInferred: ${r.inferred}` : r.quote;
  const markdown = `> ${r.quote.replace(/\s*\n\s*/g, ' ')}\n\n${r.inferred ? `Inferred (a \`should\`, a warning): ${r.inferred}\n\n` : ''}Section: ${r.section} of the document (${DOCUMENT}).`;
  const properties: Record<string, unknown> = { level: r.level, subject: r.subject, section: r.section, operations: r.operations };
  if (isSecurity(r)) {
    properties['tags'] = ['security'];
    properties['security-severity'] = SECURITY_SEVERITY[r.level];
  }
  return {
    id: r.id,
    name: ruleName(r.id),
    shortDescription: { text: r.title },
    fullDescription: { text: r.quote },
    help: { text: help, markdown },
    defaultConfiguration: { level: r.level === 'must' ? 'error' : 'warning' },
    properties,
  };
}

/**
 * The operations a failed requirement failed on: for a rule of every operation, those whose
 * exchanges failed it (none: it failed in a suite test, 'all'); otherwise each operation whose own
 * status is the failure, as the report's per-operation table shows it.
 */
function failedOperations(r: RequirementResult): string[] {
  if (r.operations.includes('all')) {
    const seen = Object.entries(r.byOperation ?? {})
      .filter(([, counts]) => counts.findings > 0)
      .map(([operation]) => operation)
      .sort();
    return seen.length > 0 ? seen : ['all'];
  }
  const failed = r.operations.filter((operation) => statusOn(r, operation) === r.status);
  return failed.length > 0 ? failed : r.operations;
}

/**
 * The places a failure on `operation` was at: those the report recorded, or "" when it recorded
 * none there (a failed test without a finding, a report of an earlier version).
 */
function failedPlaces(r: RequirementResult, operation: string): string[] {
  const places = r.pointers?.[operation] ?? [];
  return places.length > 0 ? places : [''];
}

/** A finding of the requirement at `pointer` (a finding without one is at ""). */
const findingAt = (r: RequirementResult, e: Evidence, pointer: string) => e.findings?.find((f) => f.requirement === r.id && (f.pointer ?? '') === pointer);

/**
 * The evidence of the failure on `operation` at `pointer`: an exchange of that operation with a
 * finding there (for "", a failed test without findings will do); failing that, for "", any
 * failure of that operation, or for a single operation any failure. None for a place the
 * sampled evidence does not show: another place's finding would mislead.
 */
function evidenceOn(r: RequirementResult, operation: string, operations: readonly string[], pointer: string): Evidence | undefined {
  const against = r.evidence.filter((e) => e.status === r.status);
  const onOperation = (e: Evidence) => e.exchange?.operation === operation || (e.exchange?.operation === undefined && operations.length === 1);
  const at = against.find((e) => onOperation(e) && (findingAt(r, e, pointer) !== undefined || (pointer === '' && e.kind === 'test' && !e.findings)));
  if (at || pointer !== '') return at;
  return against.find((e) => e.exchange?.operation === operation) ?? (operations.length === 1 ? against[0] : undefined);
}

const firstLine = (text: string): string => text.split('\n', 1)[0]!;

/** " at /signing_alg of the response body": where in the body; nothing for "" (the body itself, or no one place). */
const placeText = (pointer: string): string => (pointer === '' ? '' : ` at ${pointer} of the response body`);

/** Expected and received (the finding's message), where, then the exchange behind it. */
function resultMessage(r: RequirementResult, operation: string, pointer: string, evidence: Evidence | undefined): string {
  const counts = r.byOperation?.[operation];
  const tally = counts ? ` ${counts.findings} of ${counts.exchanges} exchange(s) of ${operation} against it.` : '';
  const folded =
    pointer === '' && r.pointersFolded?.includes(operation)
      ? ` It failed at more places on ${operation} than a report lists; the others are counted here.`
      : '';
  if (!evidence)
    return `${r.id}: ${r.title}, not met on ${operation}${placeText(pointer)}.${folded}${tally} The sampled evidence is in report.html and report.json.`;
  const said =
    (findingAt(r, evidence, pointer) ?? evidence.findings?.find((f) => f.requirement === r.id))?.message ??
    firstLine(evidence.message ?? `${r.id}: ${r.title}`);
  const lines = [pointer === '' ? said : `${said} (at ${pointer} of the response body)`];
  if (folded) lines.push(folded.trim());
  const exchange = evidence.exchange;
  if (exchange) {
    const outcome = exchange.response?.status ?? exchange.error ?? 'no response';
    lines.push(
      `Exchange${exchange.id !== undefined ? ` ${exchange.id}` : ''}: ${exchange.request.method} ${exchange.request.url} → ${outcome} (${evidence.source}${evidence.test ? `, test "${evidence.test}"` : ''}).`,
    );
  } else if (evidence.test) {
    lines.push(`Test "${evidence.test}" (${evidence.source}).`);
  }
  if (evidence.counterexample) lines.push(`Counterexample: ${evidence.counterexample}`);
  if (tally) lines.push(tally.trim());
  return lines.join('\n');
}

/** Stable across runs of the same fault: what it hashes, nothing a run changes. */
const fingerprint = (parts: readonly string[]): string => createHash('sha256').update(JSON.stringify(parts)).digest('hex');

function location(r: RequirementResult): Location {
  const region = quoteRegion(r.quote);
  return {
    physicalLocation: { artifactLocation: { uri: DOCUMENT, uriBaseId: PACKAGE_ROOT }, ...(region ? { region } : {}) },
    logicalLocations: [{ name: r.section, fullyQualifiedName: `${DOCUMENT}#${r.section}` }],
  };
}

function results(r: RequirementResult, ruleIndex: number): Result[] {
  const operations = failedOperations(r);
  return operations.flatMap((operation) =>
    failedPlaces(r, operation).map((pointer) => {
      const result: Result = {
        ruleId: r.id,
        ruleIndex,
        level: r.status === 'fail' ? 'error' : 'warning',
        message: { text: resultMessage(r, operation, pointer, evidenceOn(r, operation, operations, pointer)) },
        locations: [location(r)],
        // One key only: a viewer matching on any key two results share would merge the places of an operation into one alert.
        partialFingerprints: { [FINGERPRINT]: fingerprint([r.id, operation, pointer]) },
        properties: { operation, pointer },
      };
      if (r.accepted) {
        const justification = `${r.accepted.reason}${r.accepted.until ? ` (accepted until ${r.accepted.until})` : ''}`;
        result.suppressions = [{ kind: 'external', status: 'accepted', justification }];
      }
      return result;
    }),
  );
}

/** What the traffic left unjudged, as notifications of the run: a viewer shows them beside the results, so that a clean log of a partly judged recording does not read as clean throughout. */
function notJudgedNotifications(report: Report): Notification[] {
  return (report.traffic?.notJudged ?? []).map(({ reason, count, exchanges }) => ({
    level: 'warning',
    message: {
      text: notJudgedLine(
        'not judged',
        count,
        reason,
        exchanges.map((id) => `exchange ${id}`),
      ),
    },
    descriptor: { id: 'not-judged' },
  }));
}

/** The run's invocation: an interrupted run did not execute successfully (an error notification says why); what was left unjudged is a warning notification each. */
function invocation(report: Report): Invocation {
  const notifications = notJudgedNotifications(report);
  if (report.interrupted === true) {
    const text = `${INTERRUPTED_VERDICT}: ${interruptedSources(report).join(', ')} stopped before it ended; what it did not reach is skipped, not run`;
    notifications.unshift({ level: 'error', message: { text } });
  }
  return {
    executionSuccessful: report.interrupted !== true,
    startTimeUtc: report.startedAt,
    endTimeUtc: report.finishedAt,
    ...(notifications.length > 0 ? { toolExecutionNotifications: notifications } : {}),
  };
}

export function renderSarif(report: Report): string {
  const failed = report.requirements.flatMap((r, index) => (r.status === 'fail' || r.status === 'warn' ? results(r, index) : []));
  const runProperties: Record<string, unknown> = { kind: report.kind, failOn: report.failOn, passed: report.passed, summary: report.summary };
  if (report.target) runProperties['target'] = report.target;
  if (report.interrupted === true) runProperties['interrupted'] = true;
  const log: Log = {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'tmi-conform', version, semanticVersion: version, informationUri: INFORMATION_URI, rules: report.requirements.map(rule) } },
        originalUriBaseIds: { [PACKAGE_ROOT]: { description: { text: `The root of the tmi-conform package, which ships the document at ${DOCUMENT}.` } } },
        invocations: [invocation(report)],
        columnKind: 'utf16CodeUnits',
        results: failed,
        properties: runProperties,
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
