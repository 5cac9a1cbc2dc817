// conformanceDispatcher: an exchange the kit fails on never breaks the application's request, and
// is not dropped in silence either: the report counts it among those not judged, and the
// exchanges after it are still judged.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Agent, request } from 'undici';
import { conformanceDispatcher } from '../api/conformance-dispatcher.ts';
import { INTERNAL_ERROR } from '../reports/traffic.ts';

// The engine fails on one exchange, as a defect of the kit would.
vi.mock('../rules/index.ts', async (original) => {
  const actual = await original<typeof import('../rules/index.ts')>();
  return {
    ...actual,
    judgeExchange: (...args: Parameters<typeof actual.judgeExchange>) => {
      if (args[0].request.url.includes('/boom')) throw new Error('a defect');
      return actual.judgeExchange(...args);
    },
  };
});

let tenant: Server;
let origin: string;
beforeAll(async () => {
  tenant = createServer((req, res) =>
    req.url?.startsWith('/.well-known/')
      ? res.writeHead(404).end()
      : res.writeHead(401, { 'content-type': 'application/json' }).end('{"statusCode":401,"error":"Unauthorized","message":"Missing authentication"}'),
  );
  await new Promise<void>((resolve) => tenant.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(tenant.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => tenant.close(() => resolve())));

describe('conformanceDispatcher: an exchange the kit fails on', () => {
  it('is counted not judged in the report; the application gets its answer; the next exchanges are judged', async () => {
    const dispatcher = await conformanceDispatcher({ target: origin, dispatcher: new Agent() });
    for (const path of ['/api/v2/resource-servers/a', '/api/v2/boom', '/api/v2/resource-servers/b']) {
      const answer = await request(`${origin}${path}`, { dispatcher });
      await answer.body.text();
      expect(answer.statusCode).toBe(401);
    }
    const report = await dispatcher.report();
    expect(report.traffic).toMatchObject({ exchanges: 2, notJudged: [{ reason: INTERNAL_ERROR, count: 1, exchanges: ['dispatcher-2'] }] });
  });
});
