// The attacker's key of the token attacks that name or embed a key (jwk, x5c, jku, x5u): one
// fixed RSA key, published here on purpose, as jwt_tool publishes its own. Fixed, so that
// `tmi-conform token --attack jku` makes a token the key set served elsewhere verifies (the
// report's curl command is run long after the run). It protects nothing: any verifier that
// accepts a token signed with it trusts a key the token chose.
import type { JWK } from 'jose';

export const ATTACKER_KEY_ID = 'tmi-conform-attacker';

export const ATTACKER_PRIVATE_JWK: JWK = {
  kty: 'RSA',
  n: 'w-MxL0CzzhCoGoLurumlS0CIsk27rP9qwXDczyziL11-vQSfdclAhk8H423EeOagx82fRMRzPD08ZFMzGlmMrJ0nqMp7XhHctkoXs8sbk1glm74ETfDkc90rwTXNaWz64Kd9ma7ixWVm52VIkQjpCoOcm0f59N6M_ZiwJLHTBgFLsFkBAVJguQo3Ff71ZocAK53FQEmwJG6i4JlD9faIVL1xHrT7WM7gXt3905xl78P5tEXY0tuFmYpx_1XY78_SbTge8DhKuJGjpAvw2diJ61Ya-PO100tUzE0IHncIrce04VKhSn-q0vYMXDeJNguHMVAkK2x3GcUQMA136Uy9tw',
  e: 'AQAB',
  d: 'OBjH7RBKbai3e2AjmlOu0m4Yt3crV8-NcvgvQ-VGoOnVcavxPnnz0IKxb5_vs-_X-2AXTEo19fpTYSeyaslaT9RxlxTlX3seCdYOE58Gtpt3qbIw6WEjC0s7TIlr2dUrw0oz3d8HciAn5_xJW7-BfVFTd-SU4FsbZURkrR1_oSgdkB5lzpkHL9O5a8qQIEZm3UVrVryqoND_STkEZa62gvsVHCnRDB5-XjIAtNehF5x001Vp1FnMjbkmaeg84e7rBB9yQI9FhRsqFUPeUehWppxDkMia7Gpnetpabo8CQvsBQFdgxG9_NB2aE3pyhgkAp_Iz0jof4vPcPBwhZBTdgQ',
  p: '4oEGkenHVIxrYt61HU33F_4a9WfYmwCTI00XZX1ZII1wIz-f-btNs97KOuK1oxzM8kLgvt2fm-Vp7piXHUUN3aSyNdF9rJgWtxkohyskM86mGpqOFWl7PgejIWd6J9-dEGYj1Nm93rU-be68ts3geSj9-tRtwRS9DxVHKu8VMwM',
  q: '3WWAZw7UTG948lcZA2DuF0SyDakxHlc0UnqDpb7Y0dJpIQhYQ3Gk0qEG5mvgkbrF-QquQHQz01cTzHio0OqKyDhW5rgiM1iPO1Kb_4mDHWIMncNHIYuRZlsCN8ep7y6q6YJ8QpFFkSQXBB1SlUrEK7Nilma8jecUrG0oG6bDMj0',
  dp: '0VAw1Rh35u8YsbZjIqCQ7nAZU51SsvLWBjJQo64xdf6emURLvslTZhxFQCOPfRu5XUtmS5ucysE3opEKXLcauC9hrJBaleu6Whv6suawPtwB7eXT1X-zrz_5hX4NidmAWM464JETgEJ3XbnYVQpuHSk_g9NZVaunhs_AA7ILIic',
  dq: 'yz-0mmgFxEoN6cTF5NEmotvg7iOmQSljkliA5TeIi0-0TawAg6If43ILCJx-pKqnttL0V52WOm3VckBPEsRPNjJqrRLb6vFhRN-48OZIJUBvPqIYehZMHIBuT9EQE9Fu_EJbWy1MhUtxich1mTLzVv8vAc49SbSbyRPI32HADy0',
  qi: 'xn32pzn-lhXyitLmpAMot5FxgwkCxNVGHqRbdm8TUpItwsjubUh_xBC6linbNsWvvCejKet5vT7reUbmkrVz0R-6Fmhgy8qthlBsD99hw-Z5W7n_bwA3iEaFkFIsKXt8ZTClLleGkVICkRbzxSvYfYF7Kjax8_Odjvj7tvoxGcs',
};

/** The public half, as a key set or a header's jwk carries it. */
export const ATTACKER_PUBLIC_JWK: JWK = { kty: 'RSA', n: ATTACKER_PRIVATE_JWK.n!, e: ATTACKER_PRIVATE_JWK.e!, kid: ATTACKER_KEY_ID, alg: 'RS256', use: 'sig' };
