// Recorded traffic judged offline, once, for `tmi-conform validate` and the library's
// `judgeRecording` alike: the same files give the same report whichever route reads them. Folders
// stand for their recordings; a file named twice is read once; a HAR the proxy wrote from a
// journal named too is read once, from the journal; the segments of a rotated journal are one
// recording with one rate-limit history; each exchange's token is settled against what is known of
// the tenant's keys before it is judged; what was not judged, and why, reaches the report.
import { access, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { describeBytes } from '../core/body-limit.ts';
import { UsageError } from '../core/errors.ts';
import { learnTenant, TenantTokens } from '../keys/tenant.ts';
import type { RecordingFormat } from '../recordings/detect-format.ts';
import { journalCopyIds, journalCopyReason, withoutJournalCopies } from '../recordings/journal-copies.ts';
import { cutShortReason } from '../recordings/jsonl-journal.ts';
import { detectFormat, RecordingError, type ReadProgress } from '../recordings/read.ts';
import { journalOfSegment, recordingsInFolder } from '../recordings/segments.ts';
import type { ReportBuilder } from '../reports/builder.ts';
import type { FailOn } from '../reports/fail-on.ts';
import type { Baseline, Report } from '../reports/model.ts';
import { INTERNAL_ERROR, NOT_JUDGED_NAMED, notRecordedReasons } from '../reports/traffic.ts';
import { ApiLayout } from '../rules/api-layout.ts';
import { CREDENTIAL_NOT_RECORDED, credentialState } from '../rules/credential.ts';
import type { Judgement } from '../rules/index.ts';
import type { OpenApiDescription } from '../rules/openapi/description.ts';
import type { Exchange } from '../rules/types.ts';
import { JudgingSession, recordedCredential } from './session.ts';

export interface JudgeRecordingsOptions {
  /** Starts every error line: "validate", "judgeRecording". */
  who: string;
  /** The source named in the report: the inputs as the user gave them. */
  source: string;
  failOn: FailOn;
  baseline?: Baseline;
  openapi?: OpenApiDescription;
  /** The tenant's keys (a JWKS URL or file) and issuer: offline, only what the user names is known. */
  jwks?: string;
  issuer?: string;
  /** Client ids declared not global (no token claim says so), as the proxy's --non-global-client. */
  nonGlobalClients?: readonly string[];
  maxBodyBytes?: number;
  /** What the reading notes on the way (a file skipped): the console's lines. */
  note?: (line: string) => void;
  /** What went wrong on the way without stopping it (a journal's last line cut short): stderr's lines. */
  warn?: (line: string) => void;
}

/** Places of exchanges by reason: how many, and where the first few are. */
export type Places = Map<string, { count: number; where: string[] }>;

/** What the command line says beyond the report: counts and places in the files. */
export interface RecordingsSummary {
  files: number;
  exchanges: number;
  judged: number;
  notCovered: number;
  /** Judged exchanges whose recording did not show what credential was sent. */
  credentialsNotRecorded: number;
  /** Judged exchanges whose token's signature is not known to be valid or not (no keys, or a masked token). */
  signaturesUnverified: number;
  /** Of those, the exchanges whose recording kept the token whole (so that --jwks could check it). */
  tokensKeptWhole: number;
  jwksGiven: boolean;
  /** Exchanges on covered paths the engine declined to judge, by reason. */
  notJudged: Places;
  /** Judged exchanges with a body over the body limit, whose content was not judged, by reason. */
  contentNotJudged: Places;
  /** Judged exchanges of which a part was not judged (response headers or a body the recording did not keep, a schema of the description not compiled), by reason. */
  partsNotJudged: Places;
}

export interface JudgedRecordings {
  /** Undefined when some input could not be read in full: no verdict then (`unreadable` says why). */
  report: Report | undefined;
  /** The report of what could be read, for the console, when some input could not be. */
  partial: Report;
  summary: RecordingsSummary;
  /** "FILE: reason", one per file that could not be read in full. */
  unreadable: string[];
}

/** Exchanges listed by place when the console says some were not judged. */
const NOT_JUDGED_PLACES = 3;

/** Judges the recordings `inputs` (files and folders) into one report. */
export async function judgeRecordings(inputs: readonly string[], options: JudgeRecordingsOptions): Promise<JudgedRecordings> {
  const note = options.note ?? (() => {});
  const warn = options.warn ?? (() => {});
  const files = await recordingFiles(inputs, options.who, note);
  // Offline there is no tenant to ask: only what the user named is known.
  const knowledge = await learnTenant({
    ...(options.jwks !== undefined ? { jwks: options.jwks } : {}),
    ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
  });
  if (knowledge.keys && 'problem' in knowledge.keys) throw new UsageError(`${options.who}: --jwks: ${knowledge.keys.problem}`);
  const session = new JudgingSession({
    tenant: TenantTokens.of(knowledge),
    // The API base path: the servers the description declares, else the document's /api/v2.
    layout: new ApiLayout(options.openapi ? { openapi: options.openapi } : {}),
    ...(options.nonGlobalClients ? { nonGlobalClients: options.nonGlobalClients } : {}),
    report: {
      kind: 'validate',
      source: options.source,
      maskLearnedSecrets: true,
      openapi: options.openapi !== undefined,
      ...(options.openapi ? { description: options.openapi.coverageFrame() } : {}),
    },
  });
  const builder = session.builder!;
  const summary: RecordingsSummary = {
    files: 0,
    exchanges: 0,
    judged: 0,
    notCovered: 0,
    credentialsNotRecorded: 0,
    signaturesUnverified: 0,
    tokensKeptWhole: 0,
    jwksGiven: options.jwks !== undefined,
    notJudged: new Map(),
    contentNotJudged: new Map(),
    partsNotJudged: new Map(),
  };
  const unreadable: string[] = [];
  const failed = (file: string, error: unknown) => {
    if (!(error instanceof RecordingError) && !isFsError(error)) {
      // Not the recording's fault but the kit's: still say which file it was reading.
      if (error instanceof Error) error.message = `${file}: ${error.message}`;
      throw error;
    }
    unreadable.push(`${file}: ${isFsError(error) ? fsReason(error) : (error as Error).message}`);
  };
  const formats = new Map<string, RecordingFormat>();
  for (const file of files) {
    try {
      formats.set(file, await detectFormat(file));
    } catch (error) {
      failed(file, error);
    }
  }
  // A HAR the proxy wrote from a journal named too holds the same exchanges: read once, from the journal.
  const { files: toRead, copies } = withoutJournalCopies(
    files.filter((file) => formats.has(file)),
    (file) => formats.get(file)!,
  );
  for (const copy of copies) {
    note(
      `skipped ${copy.har}: the HAR the proxy wrote at stop from the journal ${copy.journal} (${copy.entries} exchanges): each is judged once, from the journal`,
    );
    builder.addNotJudged(journalCopyReason(copy), copy.entries, journalCopyIds(copy, NOT_JUDGED_NAMED));
  }
  summary.files = files.length - copies.length;
  for (const recording of recordingsOf(toRead)) {
    await judgeOneRecording(recording, {
      formats,
      session,
      builder,
      summary,
      failed,
      warn,
      ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    });
  }
  if (unreadable.length > 0) return { report: undefined, partial: builder.build({ failOn: options.failOn }), summary, unreadable };
  const report = builder.build({ failOn: options.failOn, baseline: options.baseline });
  return { report, partial: report, summary, unreadable };
}

/** The recording files the inputs name: a folder stands for its recordings, in name order; a file named twice is read once. */
async function recordingFiles(inputs: readonly string[], who: string, note: (line: string) => void): Promise<string[]> {
  const files: string[] = [];
  for (const input of inputs) {
    let isFolder: boolean;
    try {
      await access(input);
      isFolder = (await stat(input)).isDirectory();
    } catch {
      throw new UsageError(`${who}: cannot read ${input}: no such file or not readable`);
    }
    if (!isFolder) {
      files.push(input);
      continue;
    }
    const inFolder = recordingsInFolder(input);
    if (inFolder.length === 0) throw new UsageError(`${who}: ${input} is a folder with no recording in it (a .jsonl, .jsonl.gz or .har file)`);
    files.push(...inFolder);
  }
  // A file named twice (itself and through its folder) is read once: its exchanges count once.
  const named = new Set<string>();
  const once: string[] = [];
  for (const file of files) {
    if (named.has(resolve(file))) note(`skipped ${file}: named twice, read once`);
    else once.push(file);
    named.add(resolve(file));
  }
  return once;
}

interface RecordingContext {
  formats: Map<string, RecordingFormat>;
  session: JudgingSession;
  builder: ReportBuilder;
  summary: RecordingsSummary;
  failed: (file: string, error: unknown) => void;
  warn: (line: string) => void;
  maxBodyBytes?: number;
}

/** One recording (a file, or the segments of one journal) judged with one rate-limit history. */
async function judgeOneRecording(recording: string[], context: RecordingContext): Promise<void> {
  const { formats, session, builder, summary } = context;
  // Where each exchange came from, for the console: a recording may span several files.
  let current = recording[0]!;
  const progressOf = new Map(recording.map((file) => [file, { truncatedTail: false } as ReadProgress]));
  session.beginRecording();
  await session.replay(
    recording,
    {
      progressOf: (file) => progressOf.get(file)!,
      onFile: (file) => (current = file),
      onFileError: context.failed,
      ...(context.maxBodyBytes !== undefined ? { maxBodyBytes: context.maxBodyBytes } : {}),
    },
    (exchange, judgement) => judgeInto(exchange, judgement, placeIn(current, formats.get(current)!), session, summary),
  );
  for (const [file, progress] of progressOf) {
    if (!progress.truncatedTail) continue;
    context.warn(`${file}: the last line was cut short (a recorder stopped mid-write); it was skipped`);
    builder.addNotJudged(cutShortReason(file), 1, progress.truncatedLine !== undefined ? [String(progress.truncatedLine)] : []);
  }
}

function countPlace(places: Places, reason: string, where: string): void {
  const entry = places.get(reason) ?? { count: 0, where: [] };
  entry.count++;
  if (entry.where.length < NOT_JUDGED_PLACES) entry.where.push(where);
  places.set(reason, entry);
}

function judgeInto(
  exchange: Exchange,
  judgement: Judgement | undefined,
  place: (id: string | undefined) => string,
  session: JudgingSession,
  summary: RecordingsSummary,
): void {
  summary.exchanges++;
  session.record(exchange, judgement);
  if (!judgement) {
    countPlace(summary.notJudged, INTERNAL_ERROR, place(exchange.id));
    return;
  }
  if (!judgement.operation) {
    summary.notCovered++;
    return;
  }
  if (judgement.notJudged !== undefined) {
    countPlace(summary.notJudged, judgement.notJudged, place(exchange.id));
    return;
  }
  summary.judged++;
  for (const reason of notRecordedReasons(judgement)) countPlace(summary.partsNotJudged, reason, place(exchange.id));
  // Credentials not recorded have a line of their own.
  for (const part of judgement.partsNotJudged ?? []) if (part !== CREDENTIAL_NOT_RECORDED) countPlace(summary.partsNotJudged, part, place(exchange.id));
  for (const over of judgement.bodiesOverLimit ?? []) {
    countPlace(
      summary.contentNotJudged,
      `${over.body} body over the ${describeBytes(over.limit)} body limit`,
      `${place(exchange.id)} (${describeBytes(over.bytes)})`,
    );
  }
  const state = credentialState(exchange);
  if (state === 'not-recorded') summary.credentialsNotRecorded++;
  else if (state === 'unverified') {
    summary.signaturesUnverified++;
    if (recordedCredential(exchange) !== undefined) summary.tokensKeptWhole++;
  }
}

/**
 * The files grouped into recordings, in order: the segments of one rotated journal given one
 * after the other (NAME.000001.jsonl, NAME.000002.jsonl.gz…) are one recording, judged with one
 * rate-limit history as if never split; any other file is a recording of its own.
 */
function recordingsOf(files: string[]): string[][] {
  const recordings: string[][] = [];
  let journal: string | undefined;
  for (const file of files) {
    const of = journalOfSegment(file);
    if (of !== undefined && of === journal) recordings.at(-1)!.push(file);
    else recordings.push([file]);
    journal = of;
  }
  return recordings;
}

/** Where an exchange is in its file, for the console: a journal's line, a HAR's entry index. */
function placeIn(file: string, format: RecordingFormat): (id: string | undefined) => string {
  return (id) => `${file} ${format === 'jsonl' ? 'line' : 'log.entries'} ${format === 'jsonl' ? id : `[${id}]`}`;
}

function fsReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EISDIR') return 'it is a directory, not a recording';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return (error as Error).message;
}

function isFsError(error: unknown): boolean {
  return typeof (error as NodeJS.ErrnoException)?.code === 'string';
}
