// Redaction by what a value is: a secret field, a token, key material. A mock's placeholder
// secret ("string") masks its own field and nothing else; a real secret repeated in another
// field is masked there too; an encryption key's kid and name stay readable. Checked on the
// three ways an exchange reaches a report: the proxy and validate (raw exchange to the
// builder), the suites (redacted in the worker, then the builder), and a HAR recording.
import { describe, expect, it } from 'vitest';
import { mask, redactHeaders, type SecretSink } from '../core/redact.ts';
import { isPlaceholderSecret, isSearchedSecret } from '../core/secrets.ts';
import { judgeExchange } from '../rules/index.ts';
import type { Exchange } from '../rules/types.ts';
import { ReportBuilder } from '../reports/builder.ts';
import type { Evidence, Report } from '../reports/model.ts';
import { recordExchange as harRecord } from '../recordings/write.ts';
import { redactedRecord } from '../suites/evidence.ts';
import { getExchange, resourceServer } from '../fixtures/exchanges.ts';

const PEM = '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----';
const encryption = { format: 'compact-nested-jwe', encryption_key: { name: 'orders-encryption-key', kid: 'kid-2027-01', pem: PEM } };

/** What an OpenAPI mock (Prism, WireMock) answers: "string" for every string, the secret included. */
const mockAnswer = resourceServer({
  id: 'string',
  identifier: 'string',
  name: 'string',
  signing_secret: 'string',
  client_id: 'string',
  token_encryption: encryption,
});
/** Asked for rs_lookup, answered "string": RS-LOOKUP-BY-ID-OR-AUDIENCE quotes id and identifier. */
const mockExchange = () => getExchange(mockAnswer, 'rs_lookup');

/** A real secret (long, random), echoed by the id and by a scope's description. */
const REAL_SECRET = 'k7Qw9ZpR2xL4vN8mT1sB6yH3cF5jD0aE';
const echoingExchange = () =>
  getExchange(
    resourceServer({
      id: REAL_SECRET,
      signing_secret: REAL_SECRET,
      scopes: [{ value: 'read:orders', description: `copy of ${REAL_SECRET}` }],
      token_encryption: encryption,
    }),
    'rs_lookup',
  );

type Way = (exchange: Exchange) => { received: string; body: string };

/** The proxy and validate: the builder gets the raw exchange and its judgement. */
const byBuilder: Way = (exchange) => fromReport(exchange, judgeExchange(exchange));

/** The suites: the worker redacts the exchange and its findings, the builder gets those. */
const bySuite: Way = (exchange) => {
  const recorded = redactedRecord(exchange, judgeExchange(exchange), false);
  return fromReport(recorded.exchange, recorded.judgement);
};

/** A HAR recording (proxy --record): its entry and the finding its _conformance note keeps. */
const byRecording: Way = (exchange) => {
  const { entry, findings } = harRecord(exchange, judgeExchange(exchange));
  const lookup = findings.find((f) => f.requirement === 'RS-LOOKUP-BY-ID-OR-AUDIENCE');
  const content = (entry['response'] as { content: { text: string } }).content;
  return { received: lookup!.received, body: content.text };
};

function fromReport(exchange: Exchange, judgement: ReturnType<typeof judgeExchange>): { received: string; body: string } {
  const builder = new ReportBuilder({ kind: 'validate', source: 'validate:mock.har' });
  builder.addExchange(exchange, judgement);
  const report: Report = builder.build({ failOn: 'must' });
  const lookup = report.requirements.find((r) => r.id === 'RS-LOOKUP-BY-ID-OR-AUDIENCE')!;
  const evidence = lookup.evidence.find((e: Evidence) => e.status === 'fail')!;
  return { received: evidence.findings![0]!.received, body: evidence.exchange!.response!.body! };
}

describe('redaction by what a value is', () => {
  for (const [name, way] of [
    ['proxy and validate', byBuilder],
    ['suites', bySuite],
    ['HAR recording', byRecording],
  ] as const) {
    it(`${name}: a placeholder signing_secret ("string") is masked in its field only; id, identifier and name stay readable`, () => {
      const { received, body } = way(mockExchange());
      expect(received).toBe('id "string", identifier "string"');
      const shown = JSON.parse(body) as Record<string, unknown>;
      expect(shown).toMatchObject({ id: 'string', identifier: 'string', name: 'string', client_id: 'string', signing_secret: mask('string') });
      expect(shown['signing_secret']).toBe('******');
    });

    it(`${name}: an encryption key's kid and name stay readable, its PEM is masked`, () => {
      const { body } = way(mockExchange());
      const key = (JSON.parse(body) as { token_encryption: { format: string; encryption_key: Record<string, string> } }).token_encryption;
      expect(key.format).toBe('compact-nested-jwe');
      expect(key.encryption_key['kid']).toBe('kid-2027-01');
      expect(key.encryption_key['name']).toBe('orders-encryption-key');
      expect(key.encryption_key['pem']).toBe(mask(PEM));
    });

    it(`${name}: a real secret repeated in another field is masked there too, in the evidence and in the finding`, () => {
      const { received, body } = way(echoingExchange());
      expect(received).not.toContain(REAL_SECRET);
      expect(received).toContain(`id "${mask(REAL_SECRET)}"`);
      expect(body).not.toContain(REAL_SECRET);
      const shown = JSON.parse(body) as { id: string; scopes: Array<{ description: string }> };
      expect(shown.id).toBe(mask(REAL_SECRET));
      expect(shown.scopes[0]!.description).toBe(`copy of ${mask(REAL_SECRET)}`);
    });
  }
});

describe('which secret values are searched for across text', () => {
  it('placeholders and filler are not; real secrets are', () => {
    for (const placeholder of [
      'string',
      'secret',
      'changeme',
      'REDACTED',
      '***',
      '[REDACTED]',
      '<secret>',
      'xxxxxxxxxxxxxxxx',
      '0000000000000000',
      '[REDACTED]******',
      'Password',
      '{{client_secret}}',
    ]) {
      expect(isSearchedSecret(placeholder), placeholder).toBe(false);
    }
    expect(isPlaceholderSecret('changeme')).toBe(true);
    for (const secret of [REAL_SECRET, 'pa55word', 'a-secret-of-32-characters-length', 'aaaaaaab']) expect(isSearchedSecret(secret), secret).toBe(true);
  });

  it('values under 8 characters are masked where they stand but not searched for', () => {
    expect(isSearchedSecret('s3cr3t!')).toBe(false);
    expect(isSearchedSecret('s3cr3t!x')).toBe(true);
  });

  it('HTTP Basic: the password is searched for, the user (a client id) is not', () => {
    const secrets: SecretSink = new Set();
    redactHeaders({ authorization: `Basic ${Buffer.from('client-orders-app:k7Qw9ZpR2xL4').toString('base64')}` }, secrets);
    expect(secrets.has('k7Qw9ZpR2xL4')).toBe(true);
    expect(secrets.has('client-orders-app')).toBe(false);
  });
});
