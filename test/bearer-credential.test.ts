// The one reading of a request's bearer token, used by every route that judges (suites, proxy,
// dispatcher, recordings): the header's name in any case, one value, "Bearer <token>".
import { describe, expect, it } from 'vitest';
import { bearerCredentialOf } from '../rules/token.ts';

describe('bearerCredentialOf', () => {
  it('reads the token of an Authorization header, the name in any case and the scheme in any case', () => {
    expect(bearerCredentialOf({ authorization: 'Bearer a.b.c' })).toBe('a.b.c');
    expect(bearerCredentialOf({ 'content-type': 'application/json', Authorization: 'bearer a.b.c' })).toBe('a.b.c');
  });

  it('reads nothing without the header, with another scheme, or with the header repeated', () => {
    expect(bearerCredentialOf({ accept: '*/*' })).toBeUndefined();
    expect(bearerCredentialOf({ authorization: 'Basic dXNlcjpwYXNz' })).toBeUndefined();
    expect(bearerCredentialOf({ authorization: ['Bearer a.b.c', 'Bearer d.e.f'] })).toBeUndefined();
  });
});
