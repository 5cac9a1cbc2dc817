// Inside the suite worker: every token the suites send is checked against the tenant's keys,
// as the run read them once at start (a remote set is fetched again on an unknown key id), and
// its issuer against auth_url's. Imported once, by context.ts.
import type { JSONWebKeySet } from 'jose';
import { inject } from 'vitest';
import { verifierFor } from '../keys/verifier.ts';
import { judgeTokensAgainst } from './http.ts';

declare module 'vitest' {
  interface ProvidedContext {
    /** The tenant's keys, read once by the run (null: none, and the run said so). */
    tmiJwks: JSONWebKeySet | null;
  }
}

const config = inject('tmiConfig');
const jwks = inject('tmiJwks');
const keys = jwks ? verifierFor(jwks, /^https?:\/\//i.test(config.jwksUrl) ? { refetchFrom: config.jwksUrl } : {}) : undefined;
judgeTokensAgainst({ ...(keys && 'verifier' in keys ? { verifier: keys.verifier } : {}), issuerExpected: `${config.authUrl}/` });
