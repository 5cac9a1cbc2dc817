// Reports for the report tests, built the way the drivers build them: the real ReportBuilder,
// fed exchanges judged by the real rule engine and suite test outcomes. Between them they hold
// passes, failures (must), warnings (should), skips, client findings, a rate-limit series,
// a secret that must not survive, and hostile strings that must stay inert in every format.
import { judgeExchange, RateLimitTracker } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';
import { ReportBuilder } from '../reports/builder.ts';
import type { FailOn } from '../reports/fail-on.ts';
import type { Report, ReportKind } from '../reports/model.ts';
import { BASE, claims, deleteExchange, errorExchange, getExchange, jwt, rateLimitHeaders, resourceServer, updateExchange } from '../fixtures/exchanges.ts';

/** Markup that would run script or load something if any writer failed to escape it. */
export const XSS = {
  script: '<script>window.__xss = "script"</script>',
  image: '<img src=x onerror="window.__xss = \'img\'">',
  svg: '"><svg onload="window.__xss = \'svg\'">',
  test: '</script><script>window.__xss = "test-name"</script>',
};

/** A credential a failing test quotes in its message; it must not reach any report file. */
export const LEAKED_TOKEN = 'opaque-token-0123456789abcdef';
export const LEAKED_JWT = jwt(claims());

const at = (seconds: number) => new Date(Date.parse('2027-01-15T08:00:00.000Z') + seconds * 1000).toISOString();
const epoch = (seconds: number) => String(Date.parse('2027-01-15T08:00:00.000Z') / 1000 + seconds);

/** A client spending its quota: Remaining counts down, 429s once it is spent, then a new window. */
function quotaTraffic(client: string, limit: number, window: number, requests: number, every: number, offset: number): Exchange[] {
  const usedPerWindow = new Map<number, number>();
  const requestHeaders = { Authorization: `Bearer ${jwt(claims(undefined, client))}` };
  return Array.from({ length: requests }, (_, i) => {
    const t = offset + i * every;
    const windowStart = Math.floor(t / window) * window;
    const used = (usedPerWindow.get(windowStart) ?? 0) + 1;
    usedPerWindow.set(windowStart, used);
    const headers = rateLimitHeaders(Math.max(0, limit - used), limit, epoch(windowStart + window));
    const base =
      i % 3 === 0 ? deleteExchange({ startedAt: at(t), requestHeaders }) : getExchange(resourceServer(), 'rs_1', { startedAt: at(t), requestHeaders });
    if (used > limit) return errorExchange(base, 429, { statusCode: 429, error: 'Too Many Requests', message: 'Global limit has been reached' }, headers);
    return { ...base, response: { ...base.response!, headers: { ...base.response!.headers, ...headers } } };
  });
}

export interface SampleOptions {
  kind?: ReportKind;
  source?: string;
  target?: string;
  failOn?: FailOn;
  /** Add the hostile strings (default true). */
  hostile?: boolean;
  /** Add rate-limited traffic for the chart (default true). */
  traffic?: boolean;
}

/** The exchanges of the sample: conforming ones, must and should violations, client mistakes. */
function sampleExchanges(hostile: boolean, traffic: boolean): Exchange[] {
  const exchanges: Exchange[] = [
    deleteExchange(),
    updateExchange(),
    updateExchange({ session_metadata: null }, { ...updateSessionBody(), session_metadata: {} }),
    getExchange(),
    // must: signing_alg outside the enum
    getExchange(resourceServer({ signing_alg: 'HS512' })),
    // should: a status the document rules out (it leaves the 4xx of this operation open, not a redirect)
    errorExchange(getExchange(), 302, { message: 'found elsewhere' }),
    // client: 26 properties of session_metadata, correctly refused
    errorExchange(updateExchange({ session_metadata: Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`k${i}`, 'v'])) }), 400, {
      message: 'too many properties',
    }),
  ];
  if (hostile) {
    // must: a name with < and >; the URL and the body carry markup from real traffic.
    exchanges.push(getExchange(resourceServer({ name: `${XSS.script}${XSS.image}` }), encodeURIComponent(XSS.svg)));
    exchanges.push(getExchange(resourceServer({ id: 'rs_2', name: XSS.script }), `rs_2?fields=${XSS.svg}`));
  }
  if (traffic) exchanges.push(...quotaTraffic('orders-service', 30, 60, 70, 1.5, 1), ...quotaTraffic('billing-batch', 50, 60, 24, 4.5, 3));
  return exchanges;
}

function updateSessionBody(): Record<string, unknown> {
  return JSON.parse(updateExchange().response!.body!.text) as Record<string, unknown>;
}

/** The sample report: every status, evidence of both kinds, client findings, a rate-limit series. */
export function sampleReport(options: SampleOptions = {}): Report {
  const hostile = options.hostile ?? true;
  const builder = new ReportBuilder({ kind: options.kind ?? 'run', source: options.source ?? 'run', target: options.target ?? `${BASE}` });
  const tracker = new RateLimitTracker();
  for (const exchange of sampleExchanges(hostile, options.traffic ?? true)) builder.addExchange(exchange, judgeExchange(exchange, tracker), 'traffic replay');

  builder.addTest({
    name: 'deleteTokenExchangeProfile > answers 204 with no body',
    file: 'suites/token-exchange-profiles.test.ts',
    requirements: ['TEP-DELETE-204', 'TEP-DELETE-NO-BODY'],
    status: 'pass',
    durationMs: 14,
  });
  builder.addTest({
    name: 'updateSession > clears metadata with null or {}',
    file: 'suites/sessions.test.ts',
    requirements: ['SES-METADATA-CLEARED'],
    status: 'fail',
    message: `expected session_metadata to be cleared; received {"plan":"gold"}\nrequest sent with Authorization: Bearer ${LEAKED_TOKEN}`,
    counterexample: `[{"session_metadata":{},"access_token":"${LEAKED_TOKEN}"}]`,
    durationMs: 812,
  });
  builder.addTest({
    name: 'updateSession > answers 200',
    file: 'suites/sessions.test.ts',
    requirements: ['SES-SUCCESS-200'],
    status: 'fail',
    message: 'expected 200, received 201',
    durationMs: 9,
  });
  builder.addTest({
    name: 'authentication > non-global client is refused',
    file: 'suites/authentication.test.ts',
    requirements: ['AUTH-NON-GLOBAL-401'],
    status: 'skip',
    message: 'no "non_global" credential profile in the config',
  });
  if (hostile)
    builder.addTest({
      name: `resource servers > ${XSS.test}`,
      file: 'suites/resource-servers.test.ts',
      requirements: ['RS-INCLUDE-FIELDS-BOOLEAN'],
      status: 'pass',
      message: `token ${LEAKED_JWT}`,
      durationMs: 30,
    });
  builder.skip(['AUTH-TOKEN-AUDIENCE'], 'token requests were not observed (credentials given as tokens)');
  return builder.build({ failOn: options.failOn ?? 'must' });
}

/** A second report that disagrees with the sample: it passes what the sample fails, and vice versa. */
export function disagreeingReport(): Report {
  const builder = new ReportBuilder({ kind: 'proxy', source: 'proxy', target: BASE });
  const tracker = new RateLimitTracker();
  const exchanges = [
    getExchange(), // RS-SIGNING-ALG passes here (the sample fails it)
    errorExchange(deleteExchange(), 429, { message: 'slow down' }, { 'x-ratelimit-reset': '' }), // RL-429-HEADERS fails here
    { ...getExchange(), startedAt: '2027-01-16T09:00:00.000Z' },
  ];
  for (const exchange of exchanges) builder.addExchange(exchange, judgeExchange(exchange, tracker));
  builder.addTest({ name: 'authentication > token audience', requirements: ['AUTH-TOKEN-AUDIENCE'], status: 'pass' });
  return builder.build({ failOn: 'must' });
}
