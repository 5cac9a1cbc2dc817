// core/redact.ts piece by piece, with exact outputs: what is masked (query strings, headers of
// every credential kind, secret members, tokens, PEM blocks), what is left exactly as it was,
// and which secret values are collected to be searched for elsewhere.
import { describe, expect, it } from 'vitest';
import {
  KnownSecrets,
  keptClaims,
  learnSecrets,
  mask,
  redactBody,
  redactExchange,
  redactHeaders,
  redactUrl,
  REDACTED,
  scrubSecrets,
  tokenFacts,
  type SecretSink,
} from '../core/redact.ts';
import { buildExchange } from '../rules/exchange.ts';
import { claims, jwt } from '../fixtures/exchanges.ts';

const TOKEN = jwt(claims());
const sinkOf = (): SecretSink => new Set();

describe('mask', () => {
  it('is as long as the value: the marker padded with *, or only * when shorter than the marker', () => {
    expect(mask('0123456789')).toBe(REDACTED);
    expect(mask('0123456789ab')).toBe(`${REDACTED}**`);
    expect(mask('012345678')).toBe('*********');
    expect(mask('')).toBe('');
  });
});

describe('redactUrl', () => {
  it('masks a secret in the query string and collects it', () => {
    const sink = sinkOf();
    expect(redactUrl('https://t.example.com/api/v2/sessions/s1?access_token=abcdefgh12345&x=1', sink)).toBe(
      `https://t.example.com/api/v2/sessions/s1?access_token=${mask('abcdefgh12345')}&x=1`,
    );
    expect([...sink]).toEqual(['abcdefgh12345']);
    expect(redactUrl('/x?password=hunter22')).toBe(`/x?password=${mask('hunter22')}`);
  });

  it('leaves a URL without a query exactly as it was, even where its path looks like a form', () => {
    const sink = sinkOf();
    for (const url of ['https://t.example.com/api/v2/resource-servers/rs_1', '/api/v2/sessions/a&password=hunter22', 'password=hunter22']) {
      expect(redactUrl(url, sink)).toBe(url);
    }
    expect(sink.size).toBe(0);
  });

  it('masks a token standing in the path, and in the part before the query', () => {
    expect(redactUrl(`/api/v2/resource-servers/${TOKEN}`)).toBe(`/api/v2/resource-servers/${mask(TOKEN)}`);
    expect(redactUrl(`/t/${TOKEN}?x=1`)).toBe(`/t/${mask(TOKEN)}?x=1`);
  });
});

describe('redactHeaders', () => {
  it('masks each credential header whole (the scheme word kept on Authorization), and collects the secrets', () => {
    const sink = sinkOf();
    const out = redactHeaders(
      {
        authorization: `Bearer ${TOKEN}`,
        'proxy-authorization': 'Basic cHJveHk6cHJveHktcGFzc3dvcmQ=',
        cookie: 'sid=abcdef123456; theme=dark',
        'set-cookie': 'sid=zyxwvu987654; Path=/',
        'x-api-key': 'key-0123456789',
        accept: 'application/json',
      },
      sink,
    );
    expect(out).toEqual({
      authorization: `Bearer ${REDACTED}`,
      'proxy-authorization': REDACTED,
      cookie: REDACTED,
      'set-cookie': REDACTED,
      'x-api-key': REDACTED,
      accept: 'application/json',
    });
    expect(sink).toEqual(
      new Set([
        TOKEN,
        'Basic cHJveHk6cHJveHktcGFzc3dvcmQ=',
        'sid=abcdef123456; theme=dark',
        'abcdef123456',
        'sid=zyxwvu987654; Path=/',
        'zyxwvu987654',
        'key-0123456789',
      ]),
    );
  });

  it('Basic: the credential, the decoded user:password and the password are collected, not the user', () => {
    const sink = sinkOf();
    const credential = Buffer.from('client-id:pa55word-long').toString('base64');
    expect(redactHeaders({ authorization: `Basic ${credential}` }, sink)).toEqual({ authorization: `Basic ${REDACTED}` });
    expect(sink).toEqual(new Set([credential, 'client-id:pa55word-long', 'pa55word-long']));
    const noColon = Buffer.from('only-a-long-token').toString('base64');
    const other = sinkOf();
    redactHeaders({ authorization: `basic ${noColon}` }, other);
    expect(other).toEqual(new Set([noColon, 'only-a-long-token']));
  });

  it('an Authorization header of another scheme is masked whole', () => {
    const sink = sinkOf();
    expect(redactHeaders({ authorization: 'Digest username="u", response="0123456789abcdef"' }, sink)).toEqual({ authorization: REDACTED });
    expect(sink.has('Digest username="u", response="0123456789abcdef"')).toBe(true);
  });

  it('other headers whose name says credential are masked whole', () => {
    for (const name of [
      'x-auth-token',
      'token',
      'x-client-secret',
      'x-api_key',
      'apikey',
      'x-password',
      'x-passwd',
      'x-credential',
      'x-forwarded-authorization',
      'x-session-cookie',
    ]) {
      const sink = sinkOf();
      expect(redactHeaders({ [name]: 'value-0123456789' }, sink), name).toEqual({ [name]: REDACTED });
      expect([...sink], name).toEqual(['value-0123456789']);
    }
  });

  it('any other header keeps its text, with tokens and key material masked where they stand', () => {
    const sink = sinkOf();
    const referer = `https://app.example.com/cb#access_token=${TOKEN}&state=1`;
    expect(
      redactHeaders({ referer, 'x-key': 'before -----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY----- after', accept: 'eyJ but short' }, sink),
    ).toEqual({
      referer: `https://app.example.com/cb#access_token=${mask(TOKEN)}&state=1`,
      'x-key': `before ${mask('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----')} after`,
      accept: 'eyJ but short',
    });
    // Key material holds line breaks: its JSON-escaped form (as a message quotes it) is collected too.
    expect(sink).toEqual(
      new Set([TOKEN, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----', '-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----']),
    );
  });

  it('a PEM block cut short is masked to the end', () => {
    expect(redactHeaders({ 'x-key': 'k=-----BEGIN PUBLIC KEY-----\nMIIB' })).toEqual({ 'x-key': `k=${mask('-----BEGIN PUBLIC KEY-----\nMIIB')}` });
  });

  it('values too short or placeholders are masked but not collected', () => {
    const sink = sinkOf();
    expect(redactHeaders({ 'x-api-key': 'short', authorization: 'Bearer changeme' }, sink)).toEqual({
      'x-api-key': REDACTED,
      authorization: `Bearer ${REDACTED}`,
    });
    expect(sink.size).toBe(0);
  });
});

describe('redactBody', () => {
  it('masks secret members holding structures in the parsed body: strings as long as they were, numbers as 0, null and booleans kept', () => {
    const sink = sinkOf();
    const text = JSON.stringify({ id: 'rs_1', password: { current: 'hunter2-long', n: 7, ok: true, none: null, list: ['old-one-1'] }, signing_secret: null });
    expect(JSON.parse(redactBody(text, sink))).toEqual({
      id: 'rs_1',
      password: { current: mask('hunter2-long'), n: 0, ok: true, none: null, list: [mask('old-one-1')] },
      signing_secret: null,
    });
    expect(sink).toEqual(new Set(['hunter2-long', 'old-one-1']));
  });

  it('walks arrays and nested objects, leaving what is not secret as it was', () => {
    const text = JSON.stringify([{ name: 'a', token_encryption: { encryption_key: { pem: ['x-0123456789'], kid: 'k1' } } }, 3, 'plain', null]);
    expect(JSON.parse(redactBody(text))).toEqual([
      { name: 'a', token_encryption: { encryption_key: { pem: [mask('x-0123456789')], kid: 'k1' } } },
      3,
      'plain',
      null,
    ]);
  });

  it('a body with leading white space is parsed as JSON too', () => {
    expect(redactBody(`  \n{"password": {"v": "hunter2-long"}}`)).toBe(JSON.stringify({ password: { v: mask('hunter2-long') } }));
  });

  it('JSON-like text that does not parse falls back to the text rules', () => {
    expect(redactBody('{"password": {"v": "hunter2-long"')).toBe(`{"password": {"v": "hunter2-long"`);
    expect(redactBody('{"password": ["a", "client_secret": "abcdefgh-long"')).toBe(`{"password": ["a", "client_secret": "${mask('abcdefgh-long')}"`);
    expect(redactBody('x {"password": {"v": 1}} "client_secret":"abcdefgh-long"')).toBe(`x {"password": {"v": 1}} "client_secret":"${mask('abcdefgh-long')}"`);
  });

  it('a string secret with escapes is masked as long as its unescaped value, and both forms are collected', () => {
    const sink = sinkOf();
    expect(redactBody('{"client_secret" : "ab\\"cd\\\\ef-0123"}', sink)).toBe(`{"client_secret" : "${mask('ab"cd\\ef-0123')}"}`);
    expect(sink).toEqual(new Set(['ab\\"cd\\\\ef-0123', 'ab\\\\\\"cd\\\\\\\\ef-0123', 'ab"cd\\ef-0123']));
    // An escape that does not parse is masked as it stands.
    expect(redactBody('{"client_secret":"ab\\x-0123456"}')).toBe(`{"client_secret":"${mask('ab\\x-0123456')}"}`);
  });

  it('a number secret becomes 0 and is collected', () => {
    const sink = sinkOf();
    expect(redactBody('{"password":-12345678.5e+3}', sink)).toBe('{"password":0}');
    expect([...sink]).toEqual(['-12345678.5e+3']);
  });

  it('form bodies: each secret parameter, decoded, masked as long as its decoded value', () => {
    const sink = sinkOf();
    expect(redactBody('client_secret=abc%2Bdef+ghi&refresh_token=rt-0123456789&scope=a', sink)).toBe(
      `client_secret=${mask('abc+def ghi')}&refresh_token=${mask('rt-0123456789')}&scope=a`,
    );
    expect(sink).toEqual(new Set(['abc%2Bdef+ghi', 'abc+def ghi', 'rt-0123456789']));
    // A value that does not decode is masked as it stands.
    expect(redactBody('password=%E0%A4%A-bad-long')).toBe(`password=${mask('%E0%A4%A-bad-long')}`);
    // Only whole parameter names: "my_password=" is not "password=".
    expect(redactBody('my_password=visible-value&x=1')).toBe('my_password=visible-value&x=1');
  });

  it('a body that cannot hold a secret is returned as it was', () => {
    for (const text of ['{"id":"rs_1","name":"password"}', 'plain text', '{"password_policy": "x"}', 'xpassword=1']) expect(redactBody(text)).toBe(text);
  });
});

describe('keptClaims and tokenFacts', () => {
  it('keeps only the audit claims', () => {
    expect(keptClaims(undefined)).toBeUndefined();
    expect(keptClaims({ iss: 'i', sub: 's', aud: 'a', azp: 'z', scope: 'x', gty: 'g', iat: 1, exp: 2, nbf: 0, email: 'e@x', custom: 1 })).toEqual({
      iss: 'i',
      sub: 's',
      aud: 'a',
      azp: 'z',
      scope: 'x',
      gty: 'g',
      iat: 1,
      exp: 2,
      nbf: 0,
    });
    const own = keptClaims({ iss: 'i' })!;
    expect(Object.isFrozen(own)).toBe(false);
  });

  it('copies every fact the rules judge offline, and nothing that is absent', () => {
    expect(
      tokenFacts({
        headerPresent: true,
        wellFormed: true,
        claims: { iss: 'i', secret: 'x' },
        decodeError: 'bad',
        signatureValid: false,
        clientGlobal: false,
        alg: 'none',
        signatureEmpty: true,
        issuerExpected: 'https://t/',
        recorded: false,
        heldByKit: true,
        attack: 'unsigned',
      }),
    ).toEqual({
      headerPresent: true,
      wellFormed: true,
      claims: { iss: 'i' },
      decodeError: 'bad',
      signatureValid: false,
      clientGlobal: false,
      alg: 'none',
      signatureEmpty: true,
      issuerExpected: 'https://t/',
      recorded: false,
    });
    expect(tokenFacts({ headerPresent: false, wellFormed: false })).toEqual({ headerPresent: false, wellFormed: false });
    expect(
      tokenFacts({ headerPresent: true, wellFormed: true, signatureValid: true, clientGlobal: true, decodeError: '', issuerExpected: '', alg: '' }),
    ).toEqual({
      headerPresent: true,
      wellFormed: true,
      signatureValid: true,
      clientGlobal: true,
      decodeError: '',
      issuerExpected: '',
      alg: '',
    });
  });
});

describe('KnownSecrets', () => {
  it('remembers values worth searching for, once each, longest first', () => {
    const known = new KnownSecrets();
    known.learn(['short', 'changeme', 'abcdefgh12', 'abcdefgh1234', 'abcdefgh12']);
    expect(known.size).toBe(2);
    expect(known.list()).toEqual(['abcdefgh1234', 'abcdefgh12']);
    expect(known.has('abcdefgh12')).toBe(true);
    expect(known.has('short')).toBe(false);
    known.learn(['abcdefgh123456']);
    expect(known.list()).toEqual(['abcdefgh123456', 'abcdefgh1234', 'abcdefgh12']);
  });

  it('keeps at most 1000, forgetting the oldest first', () => {
    const known = new KnownSecrets();
    const values = Array.from({ length: 1001 }, (_, i) => `secret-value-${String(i).padStart(4, '0')}`);
    known.learn(values);
    expect(known.size).toBe(1000);
    expect(known.has(values[0]!)).toBe(false);
    expect(known.has(values[1]!)).toBe(true);
    expect(known.has(values[1000]!)).toBe(true);
  });
});

describe('redactExchange', () => {
  const exchange = (parts: Partial<Parameters<typeof buildExchange>[0]> = {}) =>
    buildExchange({
      startedAt: '2027-01-15T08:00:00.000Z',
      method: 'POST',
      url: 'https://t.example.com/oauth/token?client_secret=query-secret-1234',
      requestHeaders: { 'content-type': 'application/x-www-form-urlencoded', 'x-trace': 'query-secret-1234' },
      requestBody: 'grant_type=client_credentials&client_secret=body-secret-5678&note=query-secret-1234',
      status: 200,
      responseHeaders: { 'content-type': 'application/json', 'x-echo': 'body-secret-5678' },
      responseBody: '{"access_token":"issued-token-0000000","note":"body-secret-5678"}',
      ...parts,
    });

  it('masks every secret where it stands and where it is echoed, and collects them', () => {
    const sink = sinkOf();
    const out = redactExchange(exchange(), sink);
    expect(out.request.url).toBe(`https://t.example.com/oauth/token?client_secret=${mask('query-secret-1234')}`);
    expect(out.request.headers).toEqual({ 'content-type': 'application/x-www-form-urlencoded', 'x-trace': mask('query-secret-1234') });
    expect(out.request.body!.text).toBe(`grant_type=client_credentials&client_secret=${mask('body-secret-5678')}&note=${mask('query-secret-1234')}`);
    expect(out.response!.headers).toEqual({ 'content-type': 'application/json', 'x-echo': mask('body-secret-5678') });
    expect(out.response!.body!.text).toBe(`{"access_token":"${mask('issued-token-0000000')}","note":"${mask('body-secret-5678')}"}`);
    expect(sink).toEqual(new Set(['query-secret-1234', 'body-secret-5678', 'issued-token-0000000']));
  });

  it('keeps only the audit claims of the token, and the exchange it was given unchanged', () => {
    const original = exchange({ requestHeaders: { authorization: `Bearer ${jwt({ ...claims(), email: 'a@b.c' })}` } });
    const before = JSON.stringify(original);
    const out = redactExchange(original);
    expect(out.token.claims).toEqual(claims());
    expect(out.request.headers).toEqual({ authorization: `Bearer ${REDACTED}` });
    expect(JSON.stringify(original)).toBe(before);
  });

  it('an exchange without bodies or response keeps their absence', () => {
    const out = redactExchange(buildExchange({ method: 'GET', url: '/api/v2/resource-servers/rs_1', requestHeaders: { accept: '*/*' } }));
    expect(out.request).toEqual({ method: 'GET', url: '/api/v2/resource-servers/rs_1', headers: { accept: '*/*' }, body: undefined });
    expect(out.response).toBeUndefined();
    const noBody = redactExchange(buildExchange({ method: 'DELETE', url: '/x', status: 204, responseHeaders: { 'x-echo': 'not-a-secret-here' } }));
    expect(noBody.response).toEqual({ status: 204, headers: { 'x-echo': 'not-a-secret-here' }, body: undefined });
  });

  it("with a session's known secrets: earlier secrets masked here, this one's remembered, all given to the sink", () => {
    const known = new KnownSecrets();
    redactExchange(exchange(), undefined, known);
    expect(known.list()).toEqual(['issued-token-0000000', 'query-secret-1234', 'body-secret-5678']);
    const sink = sinkOf();
    const later = redactExchange(
      buildExchange({
        method: 'GET',
        url: '/api/v2/resource-servers/issued-token-0000000',
        requestHeaders: { 'x-note': 'query-secret-1234' },
        status: 200,
        responseHeaders: { 'x-new': 'password' },
        responseBody: '{"client_secret":"another-secret-99","d":"body-secret-5678"}',
      }),
      sink,
      known,
    );
    expect(later.request.url).toBe(`/api/v2/resource-servers/${mask('issued-token-0000000')}`);
    expect(later.request.headers).toEqual({ 'x-note': mask('query-secret-1234') });
    expect(later.response!.headers).toEqual({ 'x-new': 'password' });
    expect(later.response!.body!.text).toBe(`{"client_secret":"${mask('another-secret-99')}","d":"${mask('body-secret-5678')}"}`);
    expect(sink).toEqual(new Set(['issued-token-0000000', 'query-secret-1234', 'body-secret-5678', 'another-secret-99']));
    expect(known.has('another-secret-99')).toBe(true);
  });

  it('a secret containing a shorter one is masked whole', () => {
    const out = redactExchange(
      buildExchange({
        method: 'POST',
        url: '/x',
        requestBody: 'password=abcdefgh&client_secret=abcdefgh-and-more',
        status: 200,
        responseHeaders: {},
        responseBody: 'echo abcdefgh-and-more',
      }),
    );
    expect(out.response!.body!.text).toBe(`echo ${mask('abcdefgh-and-more')}`);
  });
});

describe('scrubSecrets', () => {
  it('masks each collected secret, longest first, and what still looks like a secret member', () => {
    expect(scrubSecrets('a abcdefgh-and-more b abcdefgh', new Set(['abcdefgh', 'abcdefgh-and-more']))).toBe(
      `a ${mask('abcdefgh-and-more')} b ${mask('abcdefgh')}`,
    );
    expect(scrubSecrets('nothing here', new Set())).toBe('nothing here');
    expect(scrubSecrets(`token ${TOKEN}`, new Set())).toBe(`token ${mask(TOKEN)}`);
  });
});

describe('the edges a changed condition would slip past', () => {
  it('tokenFacts sets no key for an absent fact (not even one holding undefined), and keptClaims copies only present claims', () => {
    expect(tokenFacts({ headerPresent: false, wellFormed: false })).toStrictEqual({ headerPresent: false, wellFormed: false });
    expect(Object.keys(tokenFacts({ headerPresent: true, wellFormed: true, claims: { iss: 'i' } }))).toEqual(['headerPresent', 'wellFormed', 'claims']);
    expect(Object.keys(keptClaims({ iss: 'i', sub: undefined })!)).toEqual(['iss']);
  });

  it('the Authorization scheme is read from the start of the value, on one line', () => {
    const sink = sinkOf();
    // Not "Bearer …" at the start: masked whole, as a credential of another scheme.
    expect(redactHeaders({ authorization: `xBearer ${TOKEN}` }, sink)).toEqual({ authorization: REDACTED });
    expect([...sink]).toEqual([`xBearer ${TOKEN}`]);
    // A value that goes on past a line break is no "Bearer <token>" either.
    const broken = sinkOf();
    expect(redactHeaders({ authorization: `Bearer ${TOKEN}\nX-Injected: 1` }, broken)).toEqual({ authorization: REDACTED });
  });

  it('cookies are split at ";" or "," whether or not a space follows, and each value collected', () => {
    const sink = sinkOf();
    redactHeaders({ cookie: 'sid=abcdef123456;csrf=qwerty987654,pref=zzzzzzzz99' }, sink);
    expect(sink).toEqual(new Set(['sid=abcdef123456;csrf=qwerty987654,pref=zzzzzzzz99', 'abcdef123456', 'qwerty987654', 'zzzzzzzz99']));
  });

  it('Basic: the password is what follows the colon, not a character before it', () => {
    const sink = sinkOf();
    redactHeaders({ authorization: `Basic ${Buffer.from('ab:cdefghijkl').toString('base64')}` }, sink);
    expect(sink.has('cdefghijkl')).toBe(true);
    expect(sink.has('b:cdefghijkl')).toBe(false);
  });

  it('without a sink nothing is collected and nothing fails: headers, and an exchange with known secrets and no response', () => {
    expect(redactHeaders({ authorization: `Bearer ${TOKEN}`, cookie: 'sid=abcdef123456' })).toEqual({ authorization: `Bearer ${REDACTED}`, cookie: REDACTED });
    const known = new KnownSecrets();
    known.learn(['client-secret-0123456789']);
    const exchange = buildExchange({
      method: 'PATCH',
      url: 'https://t.example.com/api/v2/sessions/s1',
      requestBody: '{"session_metadata":{"note":"client-secret-0123456789"}}',
    });
    const safe = redactExchange(exchange, undefined, known);
    expect(safe.response).toBeUndefined();
    expect(safe.request.body!.text).toBe(`{"session_metadata":{"note":"${mask('client-secret-0123456789')}"}}`);
  });
});

describe('more edges', () => {
  it('a Bearer credential is collected without the blanks around it', () => {
    const sink = sinkOf();
    redactHeaders({ authorization: 'Bearer tok-0123456789   ' }, sink);
    expect([...sink]).toEqual(['tok-0123456789']);
  });

  it('known secrets are masked in an exchange whose response has no body', () => {
    const known = new KnownSecrets();
    known.learn(['client-secret-0123456789']);
    const exchange = buildExchange({ method: 'DELETE', url: 'https://t.example.com/api/v2/token-exchange-profiles/client-secret-0123456789', status: 204 });
    const safe = redactExchange(exchange, undefined, known);
    expect(safe.request.url).toBe(`https://t.example.com/api/v2/token-exchange-profiles/${mask('client-secret-0123456789')}`);
    expect(safe.response!.status).toBe(204);
    expect(safe.response!.body).toBeUndefined();
  });

  it('Basic: a one-character user still has its password collected on its own', () => {
    const sink = sinkOf();
    redactHeaders({ authorization: `Basic ${Buffer.from('a:cdefghijkl').toString('base64')}` }, sink);
    expect(sink.has('cdefghijkl')).toBe(true);
  });

  it('a parsed body: a token in a member that is not secret is masked, the member kept; other members stay as they were', () => {
    const sink = sinkOf();
    const out = JSON.parse(redactBody(`{"client_secret":{"v":"s3cr3t-value-123"},"note":"${TOKEN}","name":"alice"}`, sink));
    expect(out).toEqual({ client_secret: { v: mask('s3cr3t-value-123') }, note: mask(TOKEN), name: 'alice' });
    expect(sink.has(TOKEN)).toBe(true);
  });

  it('text that does not begin as JSON is never parsed, nor masked whole however many brackets it holds', () => {
    const text = `note "password": [${'['.repeat(80)}`;
    expect(redactBody(text)).toBe(text);
  });

  it('a header whose name says credential, without a sink: masked, nothing collected, nothing fails', () => {
    expect(redactHeaders({ 'x-auth-token': 'value-0123456789' })).toEqual({ 'x-auth-token': REDACTED });
  });

  it('learnSecrets: a token request teaches the client secret, and leaves the exchange as it was', () => {
    const known = new KnownSecrets();
    const request = buildExchange({
      method: 'POST',
      url: 'https://t.example.com/oauth/token',
      requestHeaders: { 'content-type': 'application/x-www-form-urlencoded' },
      requestBody: 'grant_type=client_credentials&client_id=c1&client_secret=s3cr3t-value-123',
      status: 200,
    });
    learnSecrets(request, known);
    expect(known.list()).toEqual(['s3cr3t-value-123']);
    expect(request.request.body!.text).toContain('s3cr3t-value-123');
  });

  it('CORS headers name credentials without holding one: they stay readable', () => {
    const cors = { 'access-control-allow-credentials': 'true', 'access-control-allow-headers': 'authorization, x-api-key' };
    expect(redactHeaders(cors)).toEqual(cors);
  });
});
