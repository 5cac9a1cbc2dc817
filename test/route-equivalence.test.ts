// One set of traffic, judged by every route the kit offers, must get one verdict: the same
// requirement statuses and counts, the same traffic counts, the same findings, and no secret in
// any report. The traffic: the reference with faults that break each of the three operations
// (two of them security findings), a rate limit small enough that one client is throttled
// (answered 503 by a fault, so RL-THROTTLED-429 fails) right after the journal rotates, a forged
// token, a client declared not global deleting, a client secret echoed back in a session's
// metadata, and an operation only the user's OpenAPI description knows. It is sent once, in a
// fixed order, through the conformance dispatcher to the library's proxy, then to the proxy
// command, which forwards it to the reference. The proxy command's live report is the yardstick
// (it is given everything the traffic needs: keys, issuer, the description, the non-global
// client), and every other route is given the same through its own interface. One describe
// block per route.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  conformanceDispatcher,
  judgeRecording,
  startProxy,
  type ConformanceDispatcher,
  type ConformanceDispatcherOptions,
  type JudgeRecordingOptions,
  type StartProxyOptions,
} from '../api/index.ts';
import { run as reportCommand } from '../cli/report.ts';
import { run as validateCommand } from '../cli/validate.ts';
import { startReference, type RunningReference } from '../reference/index.ts';
import { listSegments } from '../recordings/segments.ts';
import type { Report } from '../reports/model.ts';
import { startProxyCommand } from './helpers/proxy-command.ts';
import { runCli } from './helpers/cli.ts';
import { forged } from './helpers/reference.ts';
import { projectReport, projectionDiff, type RouteProjection } from './helpers/route-projection.ts';

const FAULTS = [
  'rs-signing-alg-invalid', // GET resource server: RS-SIGNING-ALG on every 200
  'read-invalid-signature-accepted', // GET resource server: a forged token is served (security)
  'session-metadata-merged', // PATCH session: SES-METADATA-ECHOED
  'delete-non-global-accepted', // DELETE profile: a non-global client deletes (security)
  'throttled-503', // over the limit: 503 instead of 429 (RL-THROTTLED-429, judged from the client's history)
];
/** Five requests per client in a window longer than the test: the sixth is over the limit. */
const RATE_LIMIT = { limit: 5, windowSeconds: 300 };
/** The journal rotates once its open segment is this old; the script pauses longer before the throttled requests. */
const ROTATE_INTERVAL = '1s';
const ROTATION_PAUSE_MS = 1600;
const RUN_REQUIREMENTS = ['RS-SIGNING-ALG', 'AUTH-NON-GLOBAL-401', 'AUTH-CREDENTIAL-REQUIRED-OTHER', 'SES-METADATA-ECHOED'];

/** The user's description: one operation the document does not have, whose 404 it does not declare (OAS-STATUS-DECLARED). */
const OPENAPI = `openapi: 3.1.0
info: { title: users, version: '1' }
servers: [{ url: /api/v2 }]
paths:
  /users/{id}:
    get:
      operationId: getUser
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses:
        '200':
          description: the user
          content: { application/json: { schema: { type: object, required: [user_id], properties: { user_id: { type: string } } } } }
`;

const dir = mkdtempSync(join(tmpdir(), 'tmi-route-eq-'));
const journalDir = join(dir, 'journal');
const journalPath = join(journalDir, 'traffic.jsonl');
const openapiPath = join(dir, 'users.openapi.yaml');
const reportDir = (route: string) => join(dir, 'reports', route);
const readReport = (route: string) => JSON.parse(readFileSync(join(reportDir(route), 'report.json'), 'utf8')) as Report;

let ref: RunningReference;
let secrets: string[];
let segments: string[];
/** Each route's report, by route name; `proxy live` is the yardstick. */
const reports = new Map<string, Report>();
/** What is still running, stopped at the end even when the setup failed half way. */
const running: Array<() => Promise<unknown>> = [];
/** The rate-limited client's last request with quota and its first over the limit: the journal segment each landed in. */
let throttledAcross: { lastServed: string; firstRefused: string } | undefined;

/** The flags every proxy command gets: what the traffic needs to be judged in full. */
const knowledgeFlags = () => [
  '--jwks',
  `${ref.origin}/.well-known/jwks.json`,
  '--issuer',
  ref.issuer,
  '--non-global-client',
  ref.clients.non_global.client_id,
  '--openapi',
  openapiPath,
  '--quiet',
];

const project = (report: Report): RouteProjection => projectReport(report, { secrets });

function expectSameVerdict(route: string): void {
  const yardstick = project(reports.get('proxy live')!);
  const projection = project(reports.get(route)!);
  const diff = projectionDiff(yardstick, projection);
  expect(diff, `${route} judged the traffic otherwise than the proxy live:\n${diff.join('\n')}`).toEqual([]);
}

beforeAll(async () => {
  writeFileSync(openapiPath, OPENAPI);
  ref = await startReference({ faults: FAULTS, rateLimit: RATE_LIMIT });
  secrets = [ref.clients.full.client_secret, ref.clients.non_global.client_secret];

  // The proxy live, rotating its journal, in front of the reference.
  const proxy = await startProxyCommand(ref.origin, [
    '--journal',
    journalPath,
    '--rotate-interval',
    ROTATE_INTERVAL,
    '--report-dir',
    reportDir('proxy live'),
    ...knowledgeFlags(),
  ]);
  running.push(() => proxy.stop());
  // The library's proxy in front of it, so that both proxies see the same traffic.
  const libraryProxyOptions: StartProxyOptions = {
    target: proxy.url,
    journalPath: join(dir, 'library-proxy', 'traffic.jsonl'),
    reportDir: reportDir('library startProxy'),
    openapi: openapiPath,
    nonGlobalClients: [ref.clients.non_global.client_id],
    jwks: `${ref.origin}/.well-known/jwks.json`,
    issuer: ref.issuer,
  };
  const libraryProxy = await startProxy(libraryProxyOptions);
  running.push(() => libraryProxy.stop());
  // The dispatcher, in front of both: it judges what the application sends and gets back.
  const agent = new Agent();
  running.push(() => agent.close());
  const dispatcherOptions: ConformanceDispatcherOptions = {
    target: libraryProxy.url,
    dispatcher: agent,
    jwks: `${ref.origin}/.well-known/jwks.json`,
    issuer: ref.issuer,
    openapi: openapiPath,
    nonGlobalClients: [ref.clients.non_global.client_id],
  };
  const dispatcher = await conformanceDispatcher(dispatcherOptions);
  const sent = await sendTraffic(dispatcher, libraryProxy.url);
  reports.set('dispatcher', await dispatcher.report());
  reports.set('library startProxy', (await libraryProxy.stop()).report);
  const stopped = await proxy.stop();
  if (stopped.code !== 0) throw new Error(`the proxy ended with ${stopped.code}: ${stopped.err}`);
  reports.set('proxy live', readReport('proxy live'));
  segments = listSegments(journalPath).map((s) => s.path);
  throttledAcross = { lastServed: segmentHolding(sent.lastServed), firstRefused: segmentHolding(sent.firstRefused) };

  // proxy --append over the journal it wrote, with no new traffic: its report at stop.
  const resumed = await startProxyCommand(ref.origin, [
    '--journal',
    journalPath,
    '--rotate-interval',
    ROTATE_INTERVAL,
    '--append',
    '--report-dir',
    reportDir('proxy --append'),
    ...knowledgeFlags(),
  ]);
  await resumed.stop();
  reports.set('proxy --append', readReport('proxy --append'));

  // The HAR the proxy writes at stop (not with rotation): the segments as one journal, resumed
  // by a proxy with --record and no new traffic.
  const harDir = join(dir, 'har');
  mkdirSync(harDir);
  writeFileSync(join(harDir, 'traffic.jsonl'), segments.map((s) => readFileSync(s, 'utf8')).join(''));
  const withHar = await startProxyCommand(ref.origin, [
    '--journal',
    join(harDir, 'traffic.jsonl'),
    '--record',
    join(harDir, 'traffic.har'),
    '--append',
    '--report-dir',
    reportDir('proxy --append --record'),
    ...knowledgeFlags(),
  ]);
  await withHar.stop();
  reports.set('proxy --append --record', readReport('proxy --append --record'));

  const validateFlags = [
    '--jwks',
    `${ref.origin}/.well-known/jwks.json`,
    '--issuer',
    ref.issuer,
    '--openapi',
    openapiPath,
    '--non-global-client',
    ref.clients.non_global.client_id,
    '--quiet',
  ];
  const validate = async (route: string, inputs: string[]) => {
    await validateCommand([...inputs, '--report-dir', reportDir(route), ...validateFlags]);
    reports.set(route, readReport(route));
  };
  await validate('validate segments', segments);
  await validate('validate HAR', [join(harDir, 'traffic.har')]);
  await validate('validate folder', [journalDir]);

  const libraryOptions: JudgeRecordingOptions = {
    openapi: openapiPath,
    jwks: `${ref.origin}/.well-known/jwks.json`,
    issuer: ref.issuer,
    nonGlobalClients: [ref.clients.non_global.client_id],
  };
  reports.set('judgeRecording', await judgeRecording(journalDir, libraryOptions));

  // report merge of two halves. Halves split in time would cut the throttled client's history
  // (its Remaining 0 in one half, its refusal in the other), which no merge of two verdicts can
  // join: a merge is only comparable for halves whose exchanges are judged independently. So the
  // halves are split by client: the rate-limited client's exchanges in one journal, every other
  // exchange (the other clients', the anonymous ones, the token requests) in the other, each
  // validated alone, then merged.
  const lines = segments.flatMap((s) =>
    readFileSync(s, 'utf8')
      .split('\n')
      .filter((line) => line !== ''),
  );
  const ofThrottled = (line: string) => line.includes(`"azp":"${ref.clients.non_global.client_id}"`);
  mkdirSync(join(dir, 'halves'));
  const halves = [join(dir, 'halves', 'others.jsonl'), join(dir, 'halves', 'throttled-client.jsonl')];
  writeFileSync(halves[0]!, `${lines.filter((line) => !ofThrottled(line)).join('\n')}\n`);
  writeFileSync(halves[1]!, `${lines.filter(ofThrottled).join('\n')}\n`);
  await validate('validate half: others', [halves[0]!]);
  await validate('validate half: throttled client', [halves[1]!]);
  await reportCommand(['merge', reportDir('validate half: others'), reportDir('validate half: throttled client'), '--out', reportDir('report merge')]);
  reports.set('report merge', readReport('report merge'));
}, 90_000);

afterAll(async () => {
  for (const stop of running.reverse()) await stop();
  await ref?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The journal segment whose lines hold `marker` (a request id sent in a header). */
function segmentHolding(marker: string): string {
  const found = segments.filter((s) => readFileSync(s, 'utf8').includes(marker));
  return found.length === 1 ? found[0]! : `${found.length} segments`;
}

interface Sent {
  /** The request ids (x-request-id) of the throttled client's last request served and its first refused. */
  lastServed: string;
  firstRefused: string;
}

/** The traffic, one request after another. */
async function sendTraffic(dispatcher: ConformanceDispatcher, origin: string): Promise<Sent> {
  let n = 0;
  const send = async (method: 'GET' | 'PATCH' | 'DELETE', path: string, token?: string, body?: unknown): Promise<{ status: number; id: string }> => {
    const id = `route-eq-${++n}`;
    const headers: Record<string, string> = {
      'x-request-id': id,
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    };
    const response = await request(`${origin}${path}`, { method, headers, dispatcher, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    await response.body.text();
    return { status: response.statusCode, id };
  };
  const token = async (profile: 'full' | 'non_global'): Promise<string> => {
    const { client_id, client_secret } = ref.clients[profile];
    const response = await request(`${origin}/oauth/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id, client_secret, audience: ref.audience }).toString(),
      dispatcher,
    });
    const answer = (await response.body.json()) as { access_token: string };
    return answer.access_token;
  };
  const {
    resource_servers: [rs],
    sessions: [session, otherSession],
    token_exchange_profiles: [profile, otherProfile],
  } = ref.fixtures;
  const full = await token('full');
  const nonGlobal = await token('non_global');
  const answered = async (status: number, call: Promise<{ status: number; id: string }>) => {
    const answer = await call;
    if (answer.status !== status) throw new Error(`request ${answer.id}: expected ${status}, got ${answer.status}`);
    return answer.id;
  };
  // The full client: five requests, its whole quota.
  await answered(200, send('GET', `/api/v2/resource-servers/${rs}`, full));
  await answered(200, send('PATCH', `/api/v2/sessions/${session}`, full, { session_metadata: { note: ref.clients.full.client_secret } }));
  await answered(204, send('DELETE', `/api/v2/token-exchange-profiles/${profile}`, full));
  await answered(404, send('GET', '/api/v2/users/usr_route_eq', full));
  await answered(200, send('GET', `/api/v2/resource-servers/${rs}`, await forged(full)));
  // Without a token: refused.
  await answered(401, send('DELETE', `/api/v2/token-exchange-profiles/${otherProfile}`));
  // The non-global client: a delete carried out, then its quota spent; the journal rotates; then refused.
  await answered(204, send('DELETE', `/api/v2/token-exchange-profiles/${otherProfile}`, nonGlobal));
  await answered(200, send('PATCH', `/api/v2/sessions/${otherSession}`, nonGlobal, { session_metadata: { plan: 'silver' } }));
  await answered(200, send('GET', `/api/v2/resource-servers/${rs}`, nonGlobal));
  await answered(200, send('GET', `/api/v2/resource-servers/${rs}`, nonGlobal));
  const lastServed = await answered(200, send('GET', `/api/v2/resource-servers/${rs}`, nonGlobal));
  await new Promise((resolve) => setTimeout(resolve, ROTATION_PAUSE_MS));
  const firstRefused = await answered(503, send('GET', `/api/v2/resource-servers/${rs}`, nonGlobal));
  await answered(503, send('PATCH', `/api/v2/sessions/${otherSession}`, nonGlobal, { session_metadata: { plan: 'bronze' } }));
  return { lastServed, firstRefused };
}

describe('the traffic (what every route is compared on)', () => {
  it('the proxy live found each fault: a finding on each of the three operations, two security findings, the throttled client, the user-described operation', () => {
    const live = project(reports.get('proxy live')!);
    for (const id of ['RS-SIGNING-ALG', 'SES-METADATA-ECHOED', 'AUTH-NON-GLOBAL-401', 'AUTH-CREDENTIAL-REQUIRED-OTHER', 'RL-THROTTLED-429'])
      expect(live.requirements[id], id).toMatch(/^(fail|warn) /);
    expect(live.requirements['OAS-STATUS-DECLARED']).toMatch(/^warn /);
    const securityFindings = live.findings.filter((f) => f.endsWith(' security'));
    expect(securityFindings.some((f) => f.startsWith('AUTH-NON-GLOBAL-401 implementation DELETE deleteTokenExchangeProfile 204'))).toBe(true);
    expect(securityFindings.some((f) => f.startsWith('AUTH-CREDENTIAL-REQUIRED-OTHER implementation GET getResourceServer 200'))).toBe(true);
    expect(live.traffic.exchanges).toBe(15);
    expect(live.secretsInReport).toBe(0);
  });

  it("the throttled client's last request served and its first refused are in two journal segments", () => {
    expect(segments.length).toBeGreaterThanOrEqual(2);
    expect(throttledAcross!.lastServed).toMatch(/\.\d{6}\.jsonl$/);
    expect(throttledAcross!.firstRefused).toMatch(/\.\d{6}\.jsonl$/);
    expect(throttledAcross!.firstRefused).not.toBe(throttledAcross!.lastServed);
  });
});

describe('the conformance dispatcher (report())', () => {
  it('gives the proxy live verdict', () => expectSameVerdict('dispatcher'));
});

describe("the library's startProxy, live", () => {
  it('gives the proxy live verdict', () => expectSameVerdict('library startProxy'));
});

describe('proxy --append over its earlier journal, no new traffic', () => {
  it('gives the proxy live verdict (segments resumed)', () => expectSameVerdict('proxy --append'));
  it('gives the proxy live verdict (the segments as one journal, with --record)', () => expectSameVerdict('proxy --append --record'));
});

describe('validate', () => {
  it('of the journal segments, named', () => expectSameVerdict('validate segments'));
  it('of the HAR the proxy wrote', () => expectSameVerdict('validate HAR'));
  it('of the folder', () => expectSameVerdict('validate folder'));
});

describe("the library's judgeRecording", () => {
  it('of the folder', () => expectSameVerdict('judgeRecording'));
});

describe('report merge of two halves (split by client)', () => {
  it('gives the proxy live verdict', () => expectSameVerdict('report merge'));
});

describe("the suites' own capture (tmi-conform run through the proxy)", () => {
  let runReport: Report;
  let proxied: Report;
  let runSecrets: string[];
  beforeAll(async () => {
    // A reference of its own: the run deletes profiles and spends quotas. Its rate limit is the
    // default one (the suites pace themselves inside it), and the run's rate-limit probe is off.
    const target = await startReference({ faults: FAULTS.filter((f) => f !== 'throttled-503') });
    runSecrets = Object.values(target.clients).map((c) => c.client_secret);
    try {
      const proxy = await startProxyCommand(target.origin, [
        '--journal',
        join(dir, 'run', 'traffic.jsonl'),
        '--report-dir',
        reportDir('proxy of run'),
        '--jwks',
        `${target.origin}/.well-known/jwks.json`,
        '--issuer',
        target.issuer,
        '--non-global-client',
        target.clients.non_global.client_id,
        '--quiet',
      ]);
      running.push(() => proxy.stop());
      const config = {
        ...target.config(),
        base_url: `${proxy.url}/api/v2`,
        auth_url: proxy.url,
        jwks_url: `${target.origin}/.well-known/jwks.json`,
        issuer: target.issuer,
        rate_limit_probe: false,
        property_runs: 2,
      };
      const configPath = join(dir, 'run.yaml');
      writeFileSync(configPath, stringify(config), { mode: 0o600 });
      const result = await runCli([
        'run',
        '--config',
        configPath,
        '--report-dir',
        reportDir('run'),
        ...RUN_REQUIREMENTS.flatMap((id) => ['--requirement', id]),
      ]);
      if (result.code !== 1) throw new Error(`run ended with ${result.code}, not 1 (findings): ${result.stderr}`);
      await proxy.stop();
      runReport = readReport('run');
      proxied = readReport('proxy of run');
    } finally {
      await target.close();
    }
  }, 120_000);

  it('its exchanges get the verdict the proxy gave them', () => {
    const observed = projectReport(proxied, { suitesComparable: true, secrets: runSecrets });
    const run = projectReport(runReport, { suitesComparable: true, secrets: runSecrets });
    // The run's traffic found what its faults break, so the comparison is not of two empty reports.
    for (const id of RUN_REQUIREMENTS) expect(observed.requirements[id], id).toMatch(/^(fail|warn) /);
    const diff = projectionDiff(observed, run);
    expect(diff, `the run judged its exchanges otherwise than the proxy that saw them:\n${diff.join('\n')}`).toEqual([]);
  });
});
