// The proxy names the attack a request's token has, read from the token alone (rules/forgery.ts):
// a request carried out with one is a security finding naming it; a signature no key can have made
// (zeros, r = s = 0) is known forged without the tenant's keys. A token naming a key URL (jku,
// x5u) is never fetched by the kit, live or offline.
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReference, type RunningReference } from '../reference/index.ts';
import { forgeryShape } from '../rules/forgery.ts';
import { makeAttackToken, type MadeAttack } from '../suites/tokens.ts';
import { readJournal, recorded, startTestProxy } from './helpers/proxy.ts';
import { tokenFor } from './helpers/reference.ts';

const BIN = fileURLToPath(new URL('../bin/tmi-conform.js', import.meta.url));

describe('forgeryShape: each attack of the catalogue, as the kit makes it, read back from the token alone', () => {
  let ref: RunningReference;
  let token: string;
  beforeAll(async () => {
    ref = await startReference();
    token = await tokenFor(ref, 'full');
  });
  afterAll(() => ref.close());

  it.each<[MadeAttack, string | undefined]>([
    ['zero-signature', 'zero-signature'],
    ['psychic-es256', 'psychic-es256'],
    ['psychic-es384', 'psychic-es384'],
    ['embedded-jwk', 'embedded-jwk'],
    ['embedded-x5c', 'embedded-x5c'],
    ['kid-path-traversal', 'kid-path-traversal'],
    ['kid-sql-injection', 'kid-sql-injection'],
    ['hs256-empty-secret', 'hs256-empty-secret'],
    ['corrupted-signature', undefined],
    ['foreign-key', undefined],
  ])('%s', async (attack, shape) => {
    const made = await makeAttackToken(attack, token, {});
    expect(typeof made).toBe('string');
    expect(forgeryShape(made as string)).toBe(shape);
  });

  it('jku, x5u and the weak secrets too; the tenant token itself has no shape', async () => {
    expect(forgeryShape((await makeAttackToken('jku', token, { keyUrl: 'http://127.0.0.1:9/keys.json' })) as string)).toBe('jku');
    expect(forgeryShape((await makeAttackToken('x5u', token, { keyUrl: 'http://127.0.0.1:9/cert.pem' })) as string)).toBe('x5u');
    expect(forgeryShape((await makeAttackToken('hs256-weak-secret', token, { secret: 'secret' })) as string)).toBe('hs256-weak-secret');
    expect(forgeryShape(token)).toBeUndefined();
  });
});

describe('the proxy in front of a target that falls for them, without the tenant keys', () => {
  let ref: RunningReference;
  let keyServer: Server;
  let keyUrl: string;
  let keyRequests = 0;
  beforeAll(async () => {
    ref = await startReference({ faults: ['zero-signature-accepted', 'embedded-jwk-accepted'] });
    keyServer = createServer((_req, res) => {
      keyRequests++;
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
    keyUrl = `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}/keys.json`;
  });
  afterAll(async () => {
    await ref.close();
    await new Promise<void>((resolve) => keyServer.close(() => resolve()));
  });

  it('names the attack of each token carried out, as a security finding; fetches no key URL a token names, live or in validate', async () => {
    const token = await tokenFor(ref, 'full');
    const under = await startTestProxy(ref.origin);
    try {
      const rs = ref.fixtures.resource_servers[0]!;
      const send = async (made: string | { missing: string }) => {
        const answer = await fetch(`${under.proxy.url}/api/v2/resource-servers/${rs}`, { headers: { authorization: `Bearer ${made as string}` } });
        await answer.arrayBuffer();
        return answer.status;
      };
      expect(await send(await makeAttackToken('zero-signature', token, {}))).toBe(200);
      expect(await send(await makeAttackToken('embedded-jwk', token, {}))).toBe(200);
      await send(await makeAttackToken('jku', token, { keyUrl }));
      await recorded(under.proxy, 3);
      await under.proxy.stop();
      const entries = readJournal(under.journalPath);
      const security = (i: number) =>
        (entries[i]!._conformance.findings as Array<{ security?: string }>).filter((f) => f.security !== undefined).map((f) => f.security);
      // Known forged without keys: no key makes a zero signature.
      expect(security(0)).toContainEqual(expect.stringContaining('a token whose signature is all zero bytes (attack zero-signature)'));
      expect(entries[1]!._conformance.token.shape).toBe('embedded-jwk');
      const validated = spawnSync(process.execPath, [BIN, 'validate', under.journalPath, '--report-dir', join(under.dir, 'validate')], { encoding: 'utf8' });
      expect(validated.status, validated.stderr).toBe(1);
      // Offline too: the shape the journal kept names the attack.
      expect(readFileSync(join(under.dir, 'validate', 'report.json'), 'utf8')).toContain('a token whose signature is all zero bytes (attack zero-signature)');
      expect(keyRequests).toBe(0);
    } finally {
      await under.dispose();
    }
  });
});
