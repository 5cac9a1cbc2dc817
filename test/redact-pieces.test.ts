// A known credential wrapped over lines, between table borders, with "\n" inside a JSON string,
// folded with indentation, split by a line continuation, or standing in pieces: masked in every
// shape (WireMock's "Request was not matched" table as WireMock writes it among them), the
// layout and what is not secret (a JWT's header and payload, the table's other text) readable.
import { describe, expect, it, vi } from 'vitest';
import { KnownSecrets, mask, redactExchange, scrubSecrets, type SecretSink } from '../core/redact.ts';
import { MIN_SECRET_PIECE, SecretPieces } from '../core/secret-pieces.ts';
import { buildExchange } from '../rules/exchange.ts';
import type { Exchange } from '../rules/types.ts';
import { ECHO_SHAPES, WIREMOCK_CAPTURED, signedLookingToken, wiremockNotMatched } from '../fixtures/echoed-credentials.ts';
import { failureText } from '../suites/failure.ts';
import { piecesOf, unwrapped } from './helpers/secret-pieces.ts';

const TOKEN = signedLookingToken('redact-pieces');
const SIGNATURE = TOKEN.split('.')[2]!;
const HEADER_AND_PAYLOAD = TOKEN.slice(0, TOKEN.lastIndexOf('.'));

/** A request sent with `token` whose answer (a mock's 404) is `body`. */
const echoed = (body: string, token = TOKEN, contentType = 'text/plain'): Exchange =>
  buildExchange({
    method: 'GET',
    url: 'https://tenant.example.com/api/v2/resource-servers/rs_1',
    requestHeaders: { authorization: `Bearer ${token}` },
    status: 404,
    responseHeaders: { 'content-type': contentType },
    responseBody: body,
  });

const responseText = (exchange: Exchange) => exchange.response!.body!.text;

describe('the WireMock fixture', () => {
  it('is the body WireMock 3.13.2 answered, verbatim: its own token laid out again gives it back byte for byte', () => {
    const lines = WIREMOCK_CAPTURED.split('\n');
    const first = lines.findIndex((line) => line.endsWith('| Authorization: Bearer')) + 1;
    let last = first;
    while (/^ {59}\| \S+$/.test(lines[last]!)) last++;
    const captured = lines
      .slice(first, last)
      .map((line) => line.slice(61))
      .join('');
    // A JWT with an RS256-sized signature, wrapped 57 characters a line.
    expect(captured.split('.').map((part) => part.length)).toEqual([51, 304, 342]);
    expect(wiremockNotMatched(captured)).toBe(WIREMOCK_CAPTURED);
  });
});

describe('a bearer token echoed wrapped by a mock is masked in every shape', () => {
  it.each(Object.keys(ECHO_SHAPES))('%s', (name) => {
    const shape = ECHO_SHAPES[name]!;
    const body = shape.body(TOKEN);
    // Today's forms alone do not find it there: the signature stands in the body in pieces.
    expect(piecesOf(unwrapped(body), SIGNATURE).length).toBeGreaterThan(0);
    const out = responseText(redactExchange(echoed(body, TOKEN, shape.contentType)));
    expect(piecesOf(out, SIGNATURE)).toEqual([]);
    expect(piecesOf(unwrapped(out), SIGNATURE)).toEqual([]);
    // The layout stays: as many lines, each as long as it was.
    expect(out.split('\n').map((line) => line.length)).toEqual(body.split('\n').map((line) => line.length));
    // Lines without a piece of the token are as they were.
    const outLines = out.split('\n');
    body.split('\n').forEach((line, i) => {
      if (piecesOf(line, TOKEN, 8).length === 0) expect(outLines[i]).toBe(line);
    });
  });

  it("WireMock's table: every line of the token masked, the rest of the table as WireMock wrote it", () => {
    const body = wiremockNotMatched(TOKEN);
    const out = responseText(redactExchange(echoed(body)));
    const bodyLines = body.split('\n');
    const outLines = out.split('\n');
    const isTokenLine = (line: string) => line.startsWith(`${' '.repeat(59)}| `) && line.length > 61 && TOKEN.includes(line.slice(61));
    expect(bodyLines.filter(isTokenLine)).toHaveLength(Math.ceil(TOKEN.length / 57));
    bodyLines.forEach((line, i) => {
      if (isTokenLine(line)) expect(outLines[i]).toBe(`${' '.repeat(59)}| ${mask(line.slice(61))}`);
      else expect(outLines[i]).toBe(line);
    });
    expect(out).toContain('Request was not matched');
    expect(out).toContain('<<<<< URL does not match');
  });
});

describe('what is masked of a piece, and what stays', () => {
  const redacted = (body: string) => responseText(redactExchange(echoed(body)));

  it(`a piece of the signature of ${MIN_SECRET_PIECE} characters is masked; one shorter stays, it proves nothing`, () => {
    const piece = SIGNATURE.slice(100, 100 + MIN_SECRET_PIECE);
    expect(redacted(`{"detail":"signature ${piece} rejected"}`)).toBe(`{"detail":"signature ${mask(piece)} rejected"}`);
    const shorter = SIGNATURE.slice(100, 99 + MIN_SECRET_PIECE);
    expect(redacted(`{"detail":"signature ${shorter} rejected"}`)).toBe(`{"detail":"signature ${shorter} rejected"}`);
  });

  it("a JWT's header and payload are no secret: alone, wrapped, they stay; beside a piece of the signature, only the signature is masked", () => {
    const wrappedClaims = `claims:\n  ${HEADER_AND_PAYLOAD.slice(0, 60)}\n  ${HEADER_AND_PAYLOAD.slice(60)}\n`;
    expect(redacted(wrappedClaims)).toBe(wrappedClaims);
    const cut = `${HEADER_AND_PAYLOAD}.${SIGNATURE.slice(0, 40)}`;
    const body = `token (cut): ${cut.slice(0, 200)}\n  ${cut.slice(200)}… (${TOKEN.length} characters)`;
    const out = redacted(body);
    expect(out).toBe(`token (cut): ${cut.slice(0, 200)}\n  ${cut.slice(200, -40)}${mask(SIGNATURE.slice(0, 40))}… (${TOKEN.length} characters)`);
  });

  it('the whole token wrapped is masked whole, its header and payload too (as where it stands unwrapped)', () => {
    const body = `${TOKEN.slice(0, 300)}\n${TOKEN.slice(300)}`;
    expect(redacted(body)).toBe(`${mask(TOKEN.slice(0, 300))}\n${mask(TOKEN.slice(300))}`);
  });

  it('a line whose first few characters happen to continue the secret is not taken for its next line', () => {
    const piece = SIGNATURE.slice(0, 30);
    // The three characters after the break are the signature's next three, then the text goes its own way.
    const body = `${piece}\n${SIGNATURE.slice(30, 33)}!next line`;
    expect(redacted(body)).toBe(`${mask(piece)}\n${SIGNATURE.slice(30, 33)}!next line`);
  });

  it('wrapped at any width, even narrower than a piece, the lines joined by wrapping are one piece', () => {
    const lines = SIGNATURE.match(/.{1,7}/g)!;
    const body = lines.map((line) => `| ${line.padEnd(7)} |`).join('\n');
    expect(piecesOf(unwrapped(redacted(body)), SIGNATURE)).toEqual([]);
  });
});

describe('pieces of other secrets, and of secrets seen earlier', () => {
  it("a client secret seen in an earlier token request, wrapped 20 characters a line in a later exchange's body", () => {
    const secret = 'qO3cV8nB1xZ6mL9kJ2hG5fD4sA7pW0eRtYuIoPlKjHgF';
    const known = new KnownSecrets();
    redactExchange(
      buildExchange({
        method: 'POST',
        url: 'https://tenant.example.com/oauth/token',
        requestHeaders: { 'content-type': 'application/x-www-form-urlencoded' },
        requestBody: `grant_type=client_credentials&client_id=c1&client_secret=${secret}`,
        status: 200,
        responseHeaders: {},
        responseBody: '{}',
      }),
      undefined,
      known,
    );
    const body = `client:\n${secret
      .match(/.{1,20}/g)!
      .map((line) => `    ${line}`)
      .join('\n')}\n`;
    const later = buildExchange({
      method: 'GET',
      url: 'https://tenant.example.com/api/v2/resource-servers/rs_1',
      requestHeaders: {},
      status: 404,
      responseHeaders: {},
      responseBody: body,
    });
    const out = responseText(redactExchange(later, undefined, known));
    expect(piecesOf(unwrapped(out), secret)).toEqual([]);
    // Without the session's memory nothing in that body says secret.
    expect(responseText(redactExchange(later))).toBe(body);
  });

  it("a bearer token the session saw earlier, echoed in WireMock's table by an exchange sent without it", () => {
    const known = new KnownSecrets();
    redactExchange(echoed('{}'), undefined, known);
    const later = buildExchange({
      method: 'GET',
      url: 'https://tenant.example.com/api/v2/resource-servers/rs_2',
      requestHeaders: {},
      status: 404,
      responseHeaders: {},
      responseBody: wiremockNotMatched(TOKEN),
    });
    expect(piecesOf(unwrapped(responseText(redactExchange(later, undefined, known))), SIGNATURE)).toEqual([]);
  });

  it('a secret taken out of the index is no longer masked; the others still are', () => {
    const other = signedLookingToken('other');
    const pieces = SecretPieces.of([TOKEN, other]);
    const text = `${SIGNATURE.slice(0, 20)}\n${other.split('.')[2]!.slice(0, 20)}`;
    pieces.delete(TOKEN);
    expect(pieces.has(TOKEN)).toBe(false);
    expect(pieces.mask(text, mask)).toBe(`${SIGNATURE.slice(0, 20)}\n${mask(other.split('.')[2]!.slice(0, 20))}`);
  });
});

describe('the index reads a text once for the same secrets', () => {
  /** `text` in the WireMock shape: `secret`'s signature wrapped 57 characters a line. */
  const wrapped = (token: string) => wiremockNotMatched(token);
  /** How many characters `read` looks at with charCodeAt (the scan's way of reading a text). */
  const charactersRead = (read: () => void): number => {
    const spy = vi.spyOn(String.prototype, 'charCodeAt');
    try {
      read();
      return spy.mock.calls.length;
    } finally {
      spy.mockRestore();
    }
  };

  it('a text found clean is not read again, and is read again once a secret is added (and masked if it holds it)', () => {
    const pieces = SecretPieces.of([signedLookingToken('other')]);
    const body = wrapped(TOKEN);
    expect(charactersRead(() => expect(pieces.mask(body, mask)).toBe(body))).toBeGreaterThanOrEqual(body.length);
    // The same text again, as a new string (traffic brings its own copy): nothing of it is read.
    const again = [...body].join('');
    expect(charactersRead(() => expect(pieces.mask(again, mask)).toBe(body))).toBe(0);
    pieces.add(TOKEN);
    const out = pieces.mask(again, mask);
    expect(piecesOf(unwrapped(out), SIGNATURE)).toEqual([]);
    expect(out.split('\n').map((line) => line.length)).toEqual(body.split('\n').map((line) => line.length));
  });

  it('a text holding a piece is masked every time it comes', () => {
    const pieces = SecretPieces.of([TOKEN]);
    const body = wrapped(TOKEN);
    const first = pieces.mask(body, mask);
    expect(first).not.toBe(body);
    expect(pieces.mask([...body].join(''), mask)).toBe(first);
  });

  it('texts of one length that differ each time (a timestamp in a body) leave a repeated text of that length remembered', () => {
    const pieces = SecretPieces.of([TOKEN]);
    const repeated = '{"updated_at":"2026-11-28T03:36:15.000Z","id":"rs_1"}';
    pieces.mask(repeated, mask);
    for (let second = 10; second < 60; second++) {
      expect(pieces.mask(repeated.replace('15.000', `${second}.000`), mask)).toBe(repeated.replace('15.000', `${second}.000`));
      expect(charactersRead(() => pieces.mask([...repeated].join(''), mask))).toBe(0);
    }
  });

  it("an index's filter grows with the secrets it holds: a session's few tokens take kilobytes, not the megabytes a thousand would", () => {
    const before = process.memoryUsage().arrayBuffers;
    const sessions = Array.from({ length: 20 }, (_, i) => {
      const known = new KnownSecrets();
      known.learn([signedLookingToken(`memory-${i}`)]);
      return known;
    });
    // 20 sessions of one token each: under 100 KB each (a filter for 1000 secrets is 2 MB).
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(20 * 100_000);
    expect(sessions.every((known) => known.pieces.size === 1)).toBe(true);
  });

  it('a session of many secrets: each one is found after the index has grown, and none once taken out', () => {
    const tokens = Array.from({ length: 60 }, (_, i) => signedLookingToken(`session-${i}`));
    const pieces = new SecretPieces(20);
    for (const token of tokens) pieces.add(token);
    const signatureOf = (token: string) => token.split('.')[2]!;
    for (const token of tokens) expect(piecesOf(unwrapped(pieces.mask(wrapped(token), mask)), signatureOf(token))).toEqual([]);
    for (const token of tokens.slice(0, 30)) pieces.delete(token);
    for (const token of tokens.slice(0, 30)) expect(pieces.mask(wrapped(token), mask)).toBe(wrapped(token));
    for (const token of tokens.slice(30)) expect(piecesOf(unwrapped(pieces.mask(wrapped(token), mask)), signatureOf(token))).toEqual([]);
  });
});

describe('text quoting a body: finding messages and suite failures', () => {
  it("a finding's excerpt of a JSON-escaped body, cut short, scrubbed with the exchange's secrets", () => {
    const sink: SecretSink = new Set();
    redactExchange(echoed(ECHO_SHAPES['json-newlines']!.body(TOKEN), TOKEN, 'application/json'), sink);
    const excerpt = JSON.stringify(`| ${SIGNATURE.slice(0, 50)}\n| ${SIGNATURE.slice(50, 90)}`).slice(0, 90) + '…';
    const out = scrubSecrets(`received ${excerpt}`, sink);
    expect(piecesOf(unwrapped(out), SIGNATURE)).toEqual([]);
    expect(out.startsWith('received "| [REDACTED]')).toBe(true);
  });

  it("a suite test's failure quotes the answer's body redacted", () => {
    const body = `invalid signature:\n  ${SIGNATURE.slice(0, 60)}\n  ${SIGNATURE.slice(60)}\n`;
    const text = failureText(['RS-LOOKUP: expected 200; received 404'], echoed(body));
    expect(
      text.startsWith(
        'RS-LOOKUP: expected 200; received 404\n  GET https://tenant.example.com/api/v2/resource-servers/rs_1 → 404 invalid signature: [REDACTED]',
      ),
    ).toBe(true);
    expect(piecesOf(unwrapped(text), SIGNATURE)).toEqual([]);
  });
});
