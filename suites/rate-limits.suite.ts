// 429 and X-RateLimit-*. Runs last: the probe spends a client's quota on purpose.
import { describe, it } from 'vitest';
import { nonNegativeInteger, rateLimitHeaders } from '../rules/rate-limit-tracker.ts';
import type { Profile } from './config.ts';
import type { Judged } from './http.ts';
import { scopesOfToken } from './tokens.ts';
import { api, config, covers, expectExamined, expectNoFindings, expectStatus, needs, needsProfile, needsServed, unknownId } from './context.ts';

const target = () => config.fixtures.resourceServers[0] ?? unknownId('resource-server');
/** Requests in flight at once during the probe. */
const PROBE_CONCURRENCY = 8;

/**
 * The client whose quota the burst spends: the non-global one when its token grants
 * read:resource_servers (a non-global client may read; only deletes need a global one), since the
 * fixture sessions are put back after the suites with the full client, which would otherwise wait
 * for its window to reset; else the full client.
 */
async function burstProfile(): Promise<Profile> {
  if (api.has('non_global') && scopesOfToken(await api.tokens.token('non_global')).includes('read:resource_servers')) return 'non_global';
  return 'full';
}

describe('rate limits', () => {
  it(
    ...covers('X-RateLimit-* values are integers, Remaining ≤ Limit, Reset in epoch seconds, counting down', 'RL-HEADER-VALUES', 'RL-SEQUENCE'),
    async (context) => {
      needsServed(context, 'getResourceServer');
      needsProfile(context, 'full');
      const answers: Judged[] = [];
      for (let i = 0; i < 5; i++) answers.push(await api.getResourceServer(target()));
      needs(
        context,
        answers.some((a) => a.examined.includes('RL-HEADER-VALUES')),
        'the target sends no X-RateLimit-* headers on ordinary responses (the document requires them on a 429 only)',
      );
      for (const answer of answers) expectNoFindings(answer, 'RL-HEADER-VALUES', 'RL-SEQUENCE');
    },
  );

  it(
    ...covers(
      'a burst beyond the limit gets a 429 (not 503, 500 or 403) with X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset',
      'RL-429-HEADERS',
      'RL-THROTTLED-429',
    ),
    async (context) => {
      needsServed(context, 'getResourceServer');
      needs(context, config.rateLimitProbe, 'rate_limit_probe is not set: the suite does not provoke a 429');
      // The burst's requests are ones the operation accepts: each answer is the resource server or
      // a refusal for the rate limit. A token without the scope would make every request of the
      // burst a scope test (a target ignoring scopes: a security finding each), and a 403 for the
      // scope could not be told from a throttled request refused with 403.
      needsProfile(context, 'full');
      const as = await burstProfile();
      const first = await api.getResourceServer(target(), { as, planned429: true });
      const remaining = nonNegativeInteger(rateLimitHeaders(first.headers).remaining);
      needs(
        context,
        remaining === undefined || remaining < config.probeMaxRequests,
        `X-RateLimit-Remaining is ${remaining}, more than probe_max_requests (${config.probeMaxRequests}) allows to spend`,
      );
      let sent = 1;
      let throttled: Judged | undefined = first.status === 429 ? first : undefined;
      while (!throttled && sent < config.probeMaxRequests) {
        const batch = Math.min(PROBE_CONCURRENCY, config.probeMaxRequests - sent);
        sent += batch;
        const answers = await Promise.all(Array.from({ length: batch }, () => api.getResourceServer(target(), { as, planned429: true })));
        // The burst ends at the first refusal for the rate limit: a 429, or another status the
        // engine finds answering a request over the limit (RL-THROTTLED-429).
        throttled = answers.find((a) => a.status === 429) ?? answers.find((a) => a.findings.some((f) => f.requirement === 'RL-THROTTLED-429'));
      }
      needs(context, throttled !== undefined, `no 429 after ${sent} requests (probe_max_requests)`);
      expectNoFindings(throttled!, 'RL-THROTTLED-429');
      expectExamined(throttled!, 'RL-429-HEADERS', 'no 429 was seen to judge its headers');
      expectNoFindings(throttled!, 'RL-429-HEADERS');
      expectStatus(throttled!, 429, 'RL-THROTTLED-429');
    },
  );
});
