// The vocabulary shared by the rule engine and both drivers (suites and proxy).

/** Header names are lower-case; repeated headers are joined with ", ". */
export type Headers = Record<string, string>;

/** The three operations the document details. */
export type DocumentOperationId = 'deleteTokenExchangeProfile' | 'updateSession' | 'getResourceServer';

export type OperationId =
  | DocumentOperationId
  | 'getToken'
  /** Any other operation under the API base path: judged by the rules that hold for every operation. */
  | 'otherOperation';

/** What is known of a body larger than the body limit (core/body-limit.ts). */
export interface OverLimit {
  /** The whole body's size in bytes. */
  bytes: number;
  /** The limit it was over. */
  limit: number;
  /** SHA-256 (hex) of the whole body as it was sent; absent when not all of it was seen. */
  sha256?: string;
}

/** What a driver captured of a body. `text` is the decoded (uncompressed, utf-8) body. */
export interface CapturedBody {
  text: string;
  /** The body was larger than the capture cap, or cut short: `text` is a prefix (or says why there is none) and is not judged. */
  truncated?: boolean;
  /** The body was over the body limit: its size and SHA-256 (`text` is its first bytes, and it is truncated). */
  overLimit?: OverLimit;
  /**
   * A recording says a body was there (its size, its Content-Length) but kept none of it: `text`
   * is empty, the body is truncated, and nothing in it is judged.
   */
  notRecorded?: true;
}

/**
 * The tokens the suites make to be refused: unsigned (alg "none"), corrupted-signature,
 * tampered-scope (a scope added, the signature kept), key-confusion (HS256 keyed with the
 * tenant's public key), foreign-key (signed by a key that is not the tenant's), expired (a
 * configured token of the tenant that has expired), and the catalogue of suites/tokens.ts
 * (other spellings of "none", a signature removed or made of zeros, the psychic ECDSA signature,
 * a key the token embeds or names, kid injection, HS256 with secrets an attacker may know).
 */
export type TokenAttack =
  | 'corrupted-signature'
  | 'unsigned'
  | 'tampered-scope'
  | 'key-confusion'
  | 'foreign-key'
  | 'other-issuer'
  | 'expired'
  | 'alg-none-capitalized'
  | 'alg-none-uppercase'
  | 'alg-none-mixed-case'
  | 'signature-stripped'
  | 'signature-empty'
  | 'zero-signature'
  | 'psychic-es256'
  | 'psychic-es384'
  | 'embedded-jwk'
  | 'embedded-x5c'
  | 'jku'
  | 'x5u'
  | 'kid-path-traversal'
  | 'kid-sql-injection'
  | 'hs256-empty-secret'
  | 'hs256-weak-secret'
  | 'hs256-client-secret';

/** What the bearer credential of a request says, decoded but never verified by the rules. */
export interface BearerToken {
  /** The raw `Authorization` header was present. */
  headerPresent: boolean;
  /** `Authorization: Bearer <token>` with a non-empty token. */
  wellFormed: boolean;
  /** Claims decoded with jose's decodeJwt; undefined when the token is not a decodable JWT. */
  claims?: Record<string, unknown>;
  /** Why the token could not be decoded, when it could not. */
  decodeError?: string;
  /**
   * Facts a driver knows about the token that its claims cannot tell (it corrupted the
   * signature itself, or the operator declared the client non-global). Undefined = unknown.
   */
  signatureValid?: boolean;
  clientGlobal?: boolean;
  /**
   * The kit holds this credential itself (a profile of the suite's configuration): whose it is
   * is known, whatever a signature check says. Undefined: not the kit's own.
   */
  heldByKit?: true;
  /** The JOSE header's `alg`, decoded, never trusted (undefined: not decodable, or not recorded). */
  alg?: string;
  /** The JWS has nothing after its last dot: no signature at all. */
  signatureEmpty?: true;
  /**
   * The issuer the driver knows the target's tokens carry (the suite: its auth_url). Undefined:
   * unknown, and the issuer is not judged.
   */
  issuerExpected?: string;
  /**
   * The driver made this token on purpose to be refused (suites/api.ts): how it made it. Not
   * judged; a report uses it to say how to make the same token again (tmi-conform token).
   */
  attack?: TokenAttack;
  /**
   * The token names a key URL (jku, x5u) the driver serves and watches: whether the target
   * requested it while answering. Undefined: nobody watched.
   */
  keyUrlFetched?: boolean;
  /**
   * The shape of a known forgery the token has (rules/forgery.ts), read from its header and
   * signature, never verified: how a driver that did not make the token names the attack.
   */
  shape?: TokenAttack;
  /** hs256-weak-secret: the public weak secret (a word of the kit's list, never a configured secret) it was signed with. */
  attackSecret?: string;
  /**
   * false: the recording does not prove which credential was sent (a foreign recorder dropped
   * the Authorization header or masked the token); no authentication finding is made then.
   */
  recorded?: false;
}

export interface ExchangeOrder {
  clock: string;
  sent: number;
  received: number;
}

/** One request and its response: the unit every check judges. */
export interface Exchange {
  /** Stable id within a run or a recording (e.g. journal line number). */
  id?: string;
  /** ISO 8601 time the request started. */
  startedAt: string;
  /** Milliseconds from request start to response end; undefined when there was no response. */
  durationMs?: number;
  /**
   * The driver's own ordering of its exchanges, finer than startedAt's whole milliseconds:
   * `sent` (taken before the request went out) and `received` (after the answer had arrived),
   * on the monotonic clock named `clock`. Only exchanges on the same clock are ordered by it.
   * Undefined: only the timestamps order it (recordings).
   */
  order?: ExchangeOrder;
  request: {
    method: string;
    /** Absolute URL or origin-form path with query. */
    url: string;
    headers: Headers;
    body?: CapturedBody;
  };
  /** Undefined when no response arrived (upstream error, client abort). */
  response?: {
    status: number;
    headers: Headers;
    body?: CapturedBody;
    /**
     * false: a recording kept no header of this response but Content-Type and Content-Length (a
     * recorder that drops them), so a header missing here may have been sent. Undefined: the
     * headers are as they were received.
     */
    headersRecorded?: false;
  };
  /** Transport-level outcome when there was no complete response. */
  error?: string;
  /** Derived from request.headers.authorization; see rules/token.ts. */
  token: BearerToken;
}

export type Level = 'must' | 'should';
export type Subject = 'implementation' | 'client';

export interface Finding {
  requirement: string;
  level: Level;
  subject: Subject;
  /** Name of the check that produced it (set by defineCheck). */
  check: string;
  /** What the requirement asks of the exchange, in words: "signing_alg to be one of …". */
  expected: string;
  /** What the exchange showed instead: "\"HS512\"", "404", "no body". */
  received: string;
  /**
   * Set on a security finding: what the target did that it should have refused, in words ("the
   * target carried out a DELETE sent with an unsigned token"). A request carried out without the
   * credential or scope it needs is one, whatever the requirement's level.
   */
  security?: string;
  /**
   * The place in the documented shape of the body the finding is about (the response body for an
   * implementation finding, the request body for a client one), as an RFC 6901 JSON pointer: ""
   * the body itself, "/signing_alg" a field, "/session_metadata/*" any free key (or any element
   * of an array). Made from the document's shape, never from the body's own keys or indices, so
   * the same fault names the same place whatever inputs a run generated. Undefined: the finding
   * names no one field of a body (a header, a status, the body as a whole not being JSON).
   */
  pointer?: string;
  // No message: where a finding is shown, its message is made from these (rules/message.ts).
}

/** An exchange placed on the document: which operation, with which path parameter. */
export interface MatchedOperation {
  operation: OperationId;
  /**
   * The operation as the report names it: its method and templated path after the API base path
   * ("GET /users/{id}", "DELETE /token-exchange-profiles/{id}"), "POST /oauth/token" for the token endpoint.
   */
  name: string;
  /** The path parameter `id`, URL-decoded once (what a server sees); undefined for getToken and otherOperation. */
  id?: string;
  /** The raw (still encoded) path segment. */
  rawId?: string;
  /** Query parameters, decoded; repeated keys keep the last value. */
  query: Record<string, string>;
  /** Path prefix before the operation's own path (normally ".../api/v2"). */
  prefix: string;
}
