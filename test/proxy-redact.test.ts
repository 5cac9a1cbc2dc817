// Redaction as the proxy's recordings use it: every secret masked wherever it stands (JSON,
// forms, text cut short, headers, finding messages), masks as long as what they replace, and
// nothing else in a body changed.
import { describe, expect, it } from 'vitest';
import { mask, redactBody, redactHeaders, scrubSecrets, tokenFacts, type SecretSink } from '../core/redact.ts';
import { readBearerToken } from '../rules/token.ts';
import { claims, jwt } from '../fixtures/exchanges.ts';

const TOKEN = jwt(claims());

describe('redaction for recordings', () => {
  it('masks secret members of JSON in place, as long as the value, and leaves the rest of the text as it was', () => {
    const text = '{ "id": "rs_1",\n  "signing_secret": "0123456789abcdef0123",  "token_lifetime": 86400 }';
    const secrets: SecretSink = new Set();
    const out = redactBody(text, secrets);
    expect(out).toBe('{ "id": "rs_1",\n  "signing_secret": "[REDACTED]**********",  "token_lifetime": 86400 }');
    expect(secrets.has('0123456789abcdef0123')).toBe(true);
    expect(mask('abc')).toBe('***');
    expect(mask('')).toBe('');
  });

  it('masks every leaf of a secret object and keeps its shape', () => {
    const out = JSON.parse(
      redactBody(JSON.stringify({ username: 'ops', password: { current: 'hunter2-long', previous: ['old-one-1'], rotations: 3 } })),
    ) as Record<string, unknown>;
    expect(out).toEqual({ username: 'ops', password: { current: mask('hunter2-long'), previous: [mask('old-one-1')], rotations: 0 } });
  });

  it("masks an encryption key's PEM and keeps its kid and name readable (they are not secrets)", () => {
    const text = JSON.stringify({
      token_encryption: {
        format: 'compact-nested-jwe',
        encryption_key: { name: 'k', kid: 'kid-1', pem: '-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----' },
      },
    });
    const out = JSON.parse(redactBody(text)) as { token_encryption: { format: string; encryption_key: Record<string, string> } };
    expect(out.token_encryption.format).toBe('compact-nested-jwe');
    expect(out.token_encryption.encryption_key).toEqual({ name: 'k', kid: 'kid-1', pem: mask('-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----') });
  });

  it('a body nested too deep to walk that holds a secret object is masked whole, not searched in part', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    // A secret member holding an object (a structure the text rules cannot mask in place).
    const text = `{"signing_secret":{"value":"deep-secret-value-1"},"extra":${deep}}`;
    const out = redactBody(text);
    expect(out).toBe(mask(text));
    expect(out).not.toContain('deep-secret-value-1');
  });

  it('masks secrets in bodies cut short, form bodies, tokens and PEM blocks anywhere in text', () => {
    expect(redactBody('{"client_id":"a","client_secret":"s3cr3t-value-that-was-cu')).toBe('{"client_id":"a","client_secret":"[REDACTED]**************');
    expect(redactBody('grant_type=client_credentials&client_secret=abc%2Bdef&audience=x')).toBe(
      'grant_type=client_credentials&client_secret=[REDACTED]&audience=x'.replace('[REDACTED]', mask('abc+def')),
    );
    const text = redactBody(`note: ${TOKEN} and -----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY----- done password`);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('AAAA');
    expect(text.endsWith(' done password')).toBe(true);
  });

  it('redacts credentials in headers and says which scheme they used', () => {
    const secrets: SecretSink = new Set();
    const basic = Buffer.from('client:pa55word').toString('base64');
    expect(redactHeaders({ authorization: `Bearer ${TOKEN}`, cookie: 'sid=abcdef123', accept: '*/*' }, secrets)).toEqual({
      authorization: 'Bearer [REDACTED]',
      cookie: '[REDACTED]',
      accept: '*/*',
    });
    expect(redactHeaders({ authorization: `Basic ${basic}` }, secrets)).toEqual({ authorization: 'Basic [REDACTED]' });
    // The scheme word as sent: "bearer" is what a test may have sent on purpose, and its curl command sends it again.
    expect(redactHeaders({ authorization: `bearer ${TOKEN}` })).toEqual({ authorization: 'bearer [REDACTED]' });
    expect([...secrets]).toEqual(expect.arrayContaining([TOKEN, 'abcdef123', 'pa55word']));
  });

  it('collects the secrets of a credential seen before as well as the first time (each exchange scrubs its own findings)', () => {
    const other = jwt(claims('read:resource_servers', 'client-other'));
    for (const token of [TOKEN, other, TOKEN]) {
      const secrets: SecretSink = new Set();
      expect(redactHeaders({ authorization: `Bearer ${token}` }, secrets)).toEqual({ authorization: 'Bearer [REDACTED]' });
      expect([...secrets]).toEqual([token]);
    }
    // The same value under another secret header is redacted as that header is.
    expect(redactHeaders({ cookie: `Bearer ${TOKEN}` })).toEqual({ cookie: '[REDACTED]' });
  });

  it('leaves a body alone when a secret key name shows up only as a value or inside another name', () => {
    const text = '{"authentication":{"methods":[{"name":"pwd","type":"password"}]},"token_dialect":"access_token_authz"}';
    expect(redactBody(text)).toBe(text);
    expect(redactBody('{"password" : 42, "type":"password"}')).toBe('{"password" : 0, "type":"password"}');
    expect(redactBody('password=hunter22&type=password')).toBe(`password=${mask('hunter22')}&type=password`);
  });

  it('keeps the same claims for every exchange sharing a decoded token, and copies of claims it does not own', () => {
    const shared = readBearerToken({ authorization: `Bearer ${TOKEN}` });
    expect(tokenFacts(shared).claims).toBe(tokenFacts(readBearerToken({ authorization: `Bearer ${TOKEN}` })).claims);
    expect(Object.isFrozen(tokenFacts(shared).claims)).toBe(true);
    const own: Record<string, unknown> = { ...claims(), secret_claim: 'x' };
    const facts = tokenFacts({ headerPresent: true, wellFormed: true, claims: own });
    own['sub'] = 'changed';
    expect(facts.claims).toEqual(claims());
  });

  it('scrubs finding messages of the collected secrets, also when a message shows a value cut short', () => {
    const secrets: SecretSink = new Set(['a-long-signing-secret-value']);
    expect(scrubSecrets('received "a-long-signing-secret-value"', secrets)).toBe(`received "${mask('a-long-signing-secret-value')}"`);
    expect(scrubSecrets('received {"id":"x","signing_secret":"a-long-sign…', new Set())).toBe(`received {"id":"x","signing_secret":"${mask('a-long-sign…')}`);
  });

  it('keeps what the rules need of the token and nothing secret', () => {
    const facts = tokenFacts(readBearerToken({ authorization: `Bearer ${TOKEN}` }));
    // The JOSE header's alg too: an unsigned token is judged offline as it was live.
    expect(facts).toEqual({ headerPresent: true, wellFormed: true, claims: claims(), alg: 'RS256' });
    expect(JSON.stringify(facts)).not.toContain(TOKEN.split('.')[2]);
    expect(tokenFacts(readBearerToken({ authorization: 'Bearer' }))).toMatchObject({ headerPresent: true, wellFormed: false });
  });
});
