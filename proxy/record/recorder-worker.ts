// The recorder thread: judges every finished flow (judge → record → journal → report →
// status), appends it to the journal (rotating it into segments, compressing the closed ones,
// when told to), rewrites the reports every report interval, and at stop writes the HAR file
// and the reports. It runs beside the forwarding thread so that judging never delays a response.
// recorder-worker.mjs, the thread's entry, runs it with the thread's settings and port.
import { randomUUID } from 'node:crypto';
import type { MessagePort } from 'node:worker_threads';
import { JudgingSession } from '../../judging/session.ts';
import { writeReports } from '../../reports/write.ts';
import type { Judgement } from '../../rules/index.ts';
import type { Exchange } from '../../rules/types.ts';
import { judgeEarlierTraffic } from '../judge/earlier-traffic.ts';
import { ClosedSegments } from './compress.ts';
import { writeHarFromJournal } from './har-writer.ts';
import { Journal } from './journal.ts';
import { JudgeAddon, prepareTokens } from '../judge/judge.ts';
import { Pipeline } from './pipeline.ts';
import { RecordAddon } from './record.ts';
import { TenantTokens } from '../../keys/tenant.ts';
import type { OpenApiDescription } from '../../rules/openapi/description.ts';
import { ApiLayout } from '../../rules/api-layout.ts';
import { apiBaseOfTarget } from '../../rules/api-base.ts';
import { loadOpenApiFile } from '../../rules/openapi/load.ts';
import { ReportAddon } from './report.ts';
import { cutShortReason } from '../../recordings/jsonl-journal.ts';
import { AdminListener, OPERATIONS_LIVE, type SessionState } from '../admin/admin.ts';
import { operationRows } from '../../reports/operations.ts';
import { coverageFigures } from '../../reports/coverage-render.ts';
import { NotJudgedAddon } from './not-judged.ts';
import { AdminFeedAddon } from './admin-feed.ts';
import { flowsFromBatch } from './flow-batch.ts';
import type { FromRecorder, RecorderSettings, RecorderSummary, ToRecorder } from './messages.ts';

/** The counts for the status line travel with a progress message at most this often. */
const COUNTS_EVERY_MS = 200;

/** What every part of the recorder thread is given: its settings, and the way to the forwarding thread. */
interface Thread {
  settings: RecorderSettings;
  port: MessagePort;
  post(message: FromRecorder): void;
  warn(message: string): void;
  /** The journal's closed segments, compressed when the settings say so. */
  closedSegments: ClosedSegments;
}

/**
 * The recorder thread, from its settings and the port to the forwarding thread: it posts
 * `ready` (or `failed`) and then records every batch of flows it is sent until it is told to stop.
 */
export async function runRecorder(settings: RecorderSettings, port: MessagePort): Promise<void> {
  const post = (message: FromRecorder) => port.postMessage(message);
  const warn = (message: string) => post({ type: 'warn', message });
  const thread: Thread = { settings, port, post, warn, closedSegments: new ClosedSegments(settings.rotation?.compress === true, warn) };
  const openapi = await loadOpenApi(thread);
  // The admin listener first: a busy port must fail before the journal is touched. What it serves
  // is asked of the pipeline below, made in the same turn, before any request can arrive.
  const admin = openapi === null ? null : await startAdmin(thread);
  const journal = openapi === null || admin === null ? undefined : openJournal(thread);
  // (No journal when either failed.)
  if (journal === undefined || openapi === null || admin === null) void admin?.close();
  else record(thread, journal, admin, openapi);
}

/** The admin listener (--admin), listening; undefined: none asked for; null: it could not listen. */
async function startAdmin({ settings, post }: Thread): Promise<AdminListener | undefined | null> {
  if (!settings.admin) return undefined;
  const listener = new AdminListener(settings.admin, settings.reportTarget);
  try {
    await listener.listen();
    return listener;
  } catch (error) {
    const { host, port: adminPort } = settings.admin;
    const code = (error as NodeJS.ErrnoException).code;
    post({
      type: 'failed',
      message: `cannot listen on --admin ${host.includes(':') ? `[${host}]` : host}:${adminPort}: ${code === 'EADDRINUSE' ? 'the address is in use' : code === 'EADDRNOTAVAIL' ? 'no such local address' : (error as Error).message}`,
    });
    return null;
  }
}

/** The user's description (--openapi), read again here: the forwarding thread checked it at start. Null: it failed. */
async function loadOpenApi({ settings, post }: Thread): Promise<OpenApiDescription | undefined | null> {
  if (settings.openapiPath === undefined) return undefined;
  try {
    return await loadOpenApiFile(settings.openapiPath);
  } catch (error) {
    post({ type: 'failed', message: (error as Error).message });
    return null;
  }
}

function openJournal({ settings, post, warn, closedSegments }: Thread): Journal | undefined {
  try {
    const { rotation } = settings;
    return new Journal(
      settings.journalPath,
      warn,
      settings.appendToJournal === true,
      rotation ? { ...rotation, onClosed: (path) => closedSegments.closed(path) } : undefined,
    );
  } catch (error) {
    post({ type: 'failed', message: `cannot write the journal ${settings.journalPath}: ${(error as Error).message}` });
    return undefined;
  }
}

/** The proxy's judging session (judging/session.ts): what the forwarding thread learned of the tenant, the target's API base path and the user's description. */
function proxySession(settings: RecorderSettings, openapi: OpenApiDescription | undefined): JudgingSession {
  return new JudgingSession({
    tenant: TenantTokens.fromData(settings.tenant),
    layout: new ApiLayout({ base: apiBaseOfTarget(settings.targetBasePath ?? '', openapi?.declaredBasePaths), ...(openapi ? { openapi } : {}) }),
    nonGlobalClients: settings.nonGlobalClients,
    // The description's coverage is counted from the start: 0 of its operations before any traffic.
    report: {
      kind: 'proxy',
      source: 'proxy',
      target: settings.reportTarget,
      openapi: openapi !== undefined,
      ...(openapi ? { description: openapi.coverageFrame() } : {}),
    },
    clock: `proxy session ${randomUUID()}`,
  });
}

/**
 * Progress goes back after every batch: the forwarding thread sends the next one then. The
 * counts go along now and then; a timer sends the latest once traffic pauses.
 */
class ProgressPoster {
  private countsSentAt = 0;
  private countsTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly post: Thread['post'],
    private readonly pipeline: Pipeline,
    private readonly session: JudgingSession,
  ) {}

  afterBatch(): void {
    if (performance.now() - this.countsSentAt >= COUNTS_EVERY_MS) {
      if (this.countsTimer) clearTimeout(this.countsTimer);
      this.counts();
      return;
    }
    this.post({ type: 'progress', processed: this.pipeline.processed });
    this.countsTimer ??= setTimeout(() => this.counts(), COUNTS_EVERY_MS);
  }

  /** The latest counts, now (and no timer left behind). */
  counts(): void {
    if (this.countsTimer) clearTimeout(this.countsTimer);
    this.countsTimer = undefined;
    this.countsSentAt = performance.now();
    this.post({ type: 'progress', processed: this.pipeline.processed, counts: this.session.tally.counts });
  }
}

/**
 * A resumed journal's exchanges, replayed through the session before anything new: recorded in
 * its report and tally, their reasons not judged said, their rate-limit readings charted.
 */
function replayEarlier(
  { settings, warn }: Thread,
  open: Journal,
  session: JudgingSession,
  notJudged: NotJudgedAddon,
  admin: AdminListener | undefined,
): { done: Promise<void>; count: () => number } {
  let earlier = 0;
  if (open.earlierBytes === 0) return { done: Promise.resolve(), count: () => 0 };
  const add = (exchange: Exchange, judgement: Judgement | undefined) => {
    session.record(exchange, judgement);
    notJudged.earlier(exchange, judgement);
    admin?.metrics.observe({ exchange, judgement });
    earlier++;
  };
  const done = judgeEarlierTraffic(session, settings.rotation ? open.earlierSegments : open.path, add, warn).then(
    () => {},
    (error: Error) => warn(`cannot read the earlier exchanges of ${open.path} (${error.message}); the report covers only what it could read and this session`),
  );
  return { done, count: () => earlier };
}

/**
 * The admin listener lives here, beside the judged data: it reads the session's tally, the
 * reports' verdict and the journal's size; its feed is the pipeline's last step.
 */
function followedByAdmin(admin: AdminListener, open: Journal, session: JudgingSession, report: ReportAddon, settings: RecorderSettings): AdminFeedAddon {
  admin.follow(() => ({ counts: session.tally.counts, ...soFar(report, settings) }));
  admin.metrics.countsFrom(() => session.tally.counts);
  open.onSize = (bytes, segments) => admin.metrics.journalSize(bytes, segments);
  admin.metrics.journalSize(open.bytes, open.files);
  return new AdminFeedAddon(admin);
}

/** Records every batch of flows the forwarding thread sends into `open`, until it says stop. */
function record(thread: Thread, open: Journal, admin: AdminListener | undefined, openapi: OpenApiDescription | undefined): void {
  const { settings, port, post, warn } = thread;
  const notJudged = new NotJudgedAddon(warn);
  const session = proxySession(settings, openapi);
  const report = new ReportAddon(session);
  if (open.droppedTail) report.builder.addNotJudged(cutShortReason(open.path), 1, []);
  const adminFeed = admin ? followedByAdmin(admin, open, session, report, settings) : undefined;
  const pipeline = new Pipeline(
    [new JudgeAddon(session, settings.targetOrigin), new RecordAddon(session.secrets), open, notJudged, report, ...(adminFeed ? [adminFeed] : [])],
    warn,
  );
  const progress = new ProgressPoster(post, pipeline, session);
  const timers = startTimers(thread, open, report);
  // A resumed journal's exchanges are judged first; what arrives meanwhile waits its turn (one
  // batch at most: the forwarding thread sends the next only once this one is recorded). A batch
  // with a token not seen before waits while its signature is checked; what arrives meanwhile
  // waits its turn too, so batches are judged in order.
  const earlier = replayEarlier(thread, open, session, notJudged, admin);
  let turn: Promise<void> = earlier.done;
  port.on('message', (message: ToRecorder) => {
    turn = turn.then(() => receive(message));
  });
  const judgeBatch = (flows: ReturnType<typeof flowsFromBatch>) => {
    pipeline.run(flows);
    progress.afterBatch();
  };
  /** Handles one message; a promise when it has to wait for signatures (it never rejects). */
  const receive = (message: ToRecorder): Promise<void> | undefined => {
    if (message.type === 'flows') {
      const flows = flowsFromBatch(message.batch, settings.maxBodyBytes);
      const checking = prepareTokens(session, flows);
      if (!checking) {
        judgeBatch(flows);
        return undefined;
      }
      return checking.then(
        () => judgeBatch(flows),
        (error: Error) => {
          warn(`checking token signatures: ${error.message}`);
          judgeBatch(flows);
        },
      );
    }
    if (message.type === 'refused') {
      session.tally.counts.refused = message.total;
      return undefined;
    }
    progress.counts();
    void admin?.close();
    stop(thread, open, session, report, earlier.count(), timers).then(
      (summary) => post({ type: 'stopped', summary }),
      (error: Error) => post({ type: 'stop-failed', message: error.message }),
    );
  };
  post({ type: 'ready', ...(admin ? { adminPort: admin.port } : {}) });
}

/** The verdict the reports would give now (the report builder's own), with the requirements' tally, the operations as the console names them, and the coverage's figures. */
function soFar(report: ReportAddon, settings: RecorderSettings): Omit<SessionState, 'counts'> {
  const built = report.builder.build({ failOn: settings.failOn, baseline: settings.baseline });
  return {
    verdict: { passed: built.passed, summary: built.summary },
    operations: operationRows(built.traffic, OPERATIONS_LIVE),
    ...(built.coverage ? { coverage: coverageFigures(built.coverage) } : {}),
  };
}

interface Timers {
  stop(): Promise<void>;
}

/**
 * The timers of a long run: a segment older than the rotation interval is closed even while no
 * traffic comes; the reports are rewritten every report interval from what has been judged so
 * far (written as at stop: each file complete under a temporary name, then renamed), so that a
 * proxy killed on day three leaves reports at most one interval old.
 */
function startTimers({ settings, warn }: Thread, open: Journal, report: ReportAddon): Timers {
  const intervalMs = settings.rotation?.intervalMs;
  const rotating = intervalMs === undefined ? undefined : setInterval(() => open.rotateIfDue(), Math.min(intervalMs, 1000));
  let writing: Promise<void> = Promise.resolve();
  let failed = false;
  const reportIntervalMs = settings.reportIntervalMs;
  const reporting =
    reportIntervalMs === undefined
      ? undefined
      : setInterval(() => {
          writing = writing
            .then(() =>
              writeReports(report.builder.build({ failOn: settings.failOn, baseline: settings.baseline }), settings.reportDir, {
                jobSummary: false,
                dirChecked: true,
              }),
            )
            .then(
              () => {
                if (failed) warn(`the reports are written to ${settings.reportDir} again`);
                failed = false;
              },
              (error: Error) => {
                if (!failed) warn(`cannot rewrite the reports while running (${error.message}); trying again every interval`);
                failed = true;
              },
            );
        }, reportIntervalMs);
  return {
    async stop() {
      clearInterval(rotating);
      clearInterval(reporting);
      await writing;
    },
  };
}

async function stop(
  { settings, closedSegments }: Thread,
  open: Journal,
  session: JudgingSession,
  report: ReportAddon,
  earlier: number,
  timers: Timers,
): Promise<RecorderSummary> {
  await timers.stop();
  open.close();
  if (settings.rotation && open.lastClosed !== undefined) closedSegments.closed(open.lastClosed);
  await closedSegments.settled();
  const summary: RecorderSummary = {
    counts: session.tally.counts,
    journal: {
      path: open.path,
      written: open.written,
      lost: open.lost,
      earlier,
      ...(settings.rotation ? { segments: open.segments.map((path) => closedSegments.nameOf(path)) } : {}),
    },
    reportFiles: [],
    report: report.builder.build({ failOn: settings.failOn, baseline: settings.baseline }),
  };
  if (settings.harPath !== undefined) {
    const written = await writeHarFromJournal(open.path, settings.harPath, `recorded by tmi-conform proxy in front of ${settings.reportTarget}`);
    summary.har = { path: settings.harPath, ...written };
  }
  summary.reportFiles = await writeReports(summary.report, settings.reportDir);
  return summary;
}
