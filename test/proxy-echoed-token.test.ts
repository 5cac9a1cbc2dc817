// The proxy in front of a mock that matches nothing and echoes the request's bearer token in its
// 404, wrapped (WireMock's table, a JSON string with "\n", text tables, folding, a line
// continuation): no form of any token reaches a file the proxy writes, neither whole, nor its
// signature, nor a piece of it, in the text as written or with the wrapping taken out.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_SHAPES, signedLookingToken, startEchoTarget } from '../fixtures/echoed-credentials.ts';
import { startTestProxy, type ProxyUnderTest } from './helpers/proxy.ts';
import { piecesOf, unwrapped } from './helpers/secret-pieces.ts';

describe('the proxy in front of a mock echoing the bearer token wrapped', () => {
  let target: Awaited<ReturnType<typeof startEchoTarget>>;
  let under: ProxyUnderTest;
  beforeAll(async () => {
    target = await startEchoTarget();
    under = await startTestProxy(target.origin);
  });
  afterAll(async () => {
    await under?.dispose();
    await target?.close();
  });

  it('writes no whole token, no signature and no piece of one to the journal, the HAR or any report', async () => {
    const tokens = new Map(Object.keys(ECHO_SHAPES).map((shape) => [shape, signedLookingToken(`e2e-${shape}`)]));
    for (const [shape, token] of tokens) {
      const answer = await fetch(`${under.proxy.url}/api/v2/resource-servers/${shape}`, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      });
      expect(answer.status).toBe(404);
      // The client gets the mock's answer as it was: only what is written is masked.
      expect(await answer.text()).toBe(ECHO_SHAPES[shape]!.body(token));
    }
    await under.proxy.stop();
    const reports = readdirSync(under.reportDir).map((f) => join(under.reportDir, f));
    const files = [under.journalPath, under.harPath, ...reports].filter((f) => existsSync(f));
    expect(files.map((f) => f.split('/').at(-1)).sort()).toEqual([
      'junit.xml',
      'report.html',
      'report.json',
      'report.md',
      'report.sarif',
      'traffic.har',
      'traffic.har.jsonl',
    ]);
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const [shape, token] of tokens) {
        const signature = token.split('.')[2]!;
        expect(text.includes(token), `${file}: ${shape}: the token`).toBe(false);
        expect(text.includes(signature), `${file}: ${shape}: the signature`).toBe(false);
        expect(piecesOf(text, signature), `${file}: ${shape}: pieces of the signature`).toEqual([]);
        expect(piecesOf(unwrapped(text), signature), `${file}: ${shape}: pieces of the signature, wrapping taken out`).toEqual([]);
      }
    }
    // The bodies were kept (the journal and the HAR hold each answer, report.json quotes one), readable but for the tokens.
    const journal = readFileSync(under.journalPath, 'utf8');
    for (const shape of Object.keys(ECHO_SHAPES)) expect(journal).toContain(`/api/v2/resource-servers/${shape}`);
    expect(journal).toContain('Request was not matched');
    expect(journal).toContain('[REDACTED]');
    expect(readFileSync(under.harPath, 'utf8')).toContain('Request was not matched');
    expect(readFileSync(join(under.reportDir, 'report.json'), 'utf8')).toMatch(/Request was not matched|\| authorization \||invalid credentials/);
  });
});
