// A known secret does not always stand in a text as one unbroken string: a mock's "request not
// matched" table wraps the request's bearer token over several lines between column borders, a
// JSON error echoes it with "\n" inside, a tool folds it at 76 columns with indentation, a
// report shows an excerpt cut in its middle. SecretPieces finds such pieces of known secrets and
// masks them, keeping the text's layout (each line of a wrapped token keeps its length).
//
// A piece is the secret's characters in order, with wrapping allowed between any two of them
// (WRAPPING below). It is masked when it is the whole secret, or when it holds at least
// MIN_SECRET_PIECE characters of the secret's secret part: for a signed JWT the signature (its
// header and payload are not secret and stay readable, unless the whole token stands there), for
// any other secret all of it.
//
// Finding them must cost little: the proxy masks every exchange. Each secret's secret part is
// indexed by its 4-character windows; a text is read once, its windows of 4 token characters
// looked up (a small filter first, sized to the windows it holds), and only a window found in a
// secret is followed out. A text found clean is not read again until a secret is added.

/**
 * A piece of a known secret at least this long is masked wherever it stands. 16 characters:
 * shorter than any wrapping width a mock or a tool uses (WireMock's table: 57, PEM and MIME: 64
 * and 76, narrow text-table columns: 20 and more), so every line of a wrapped secret is a piece
 * even where another column's text stands between its lines; long enough that a random
 * signature's piece never equals ordinary text by chance (64^16), and that a client secret
 * someone chose (words, a year) rarely shares so long a run with the prose around it. A piece
 * shorter than 16 characters reveals at most 96 bits of a signature of 256 and more: nothing to
 * forge or replay with. Pieces joined only by wrapping count as one piece, so a secret wrapped
 * at any width is masked whole.
 */
export const MIN_SECRET_PIECE = 16;

/** Window length: 4 token characters of 7 bits make a small integer key. */
const WINDOW = 4;

/** After wrapping, the secret must go on for this many characters (or to its end): one matching character is chance. */
const AFTER_WRAP = 4;

/** Characters a token or secret is made of (base64url, base64, a JWT's dots, RFC 6750's token68): 1…69, else 0; by UTF-16 code unit, so that the scan needs no range test. */
const CODE: Readonly<Uint8Array> = characterCodes();

function characterCodes(): Uint8Array {
  const codes = new Uint8Array(0x10000);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=.~';
  for (let i = 0; i < alphabet.length; i++) codes[alphabet.charCodeAt(i)] = i + 1;
  return codes;
}

/**
 * How many texts found clean an index remembers, and how long one may be: the header values and
 * most bodies of an API's traffic, and at most 512 KB of text for each index (a session keeps
 * one, and 16 more for secrets outside it).
 */
const CLEAN_TEXTS = 64;
const CLEAN_TEXT_LENGTH = 4096;
const CLEAN_OF_ONE_LENGTH = 4;

/**
 * The filter's size at first (2^bits slots), and how many slots it keeps for each indexed window
 * as it grows (SecretPieces.grow): one in 32 of a text's windows, or fewer, then passes it by chance.
 */
const MIN_FILTER_BITS = 10;
const SLOTS_PER_WINDOW = 32;

/** A window key's slot in a filter of 2^bits slots. */
const filterSlot = (key: number, bits: number): number => Math.imul(key, 0x9e3779b1) >>> (32 - bits);

const BACKSLASH = 0x5c;
const LF = 0x0a;

/** Whitespace, a table's column border, a box-drawing character: what lies between the lines of a wrapped value. */
function isWrappingChar(c: number): boolean {
  return c === 0x20 || c === LF || c === 0x0d || c === 0x09 || c === 0x0b || c === 0x0c || c === 0x7c || c === 0xa0 || (c >= 0x2500 && c <= 0x257f);
}

/** The letter of an escaped control character as JSON and most languages write it (\n, \r, \t). */
const isEscapeLetter = (c: number): boolean => c === 0x6e || c === 0x72 || c === 0x74;

/** Characters of a table's horizontal border (+---+, |===|, ├───┤); at least 3 rule characters make one. */
const isBorderChar = (c: number): boolean => c === 0x2d || c === 0x3d || c === 0x2b || c === 0x7c || c === 0x20 || c === 0x09 || (c >= 0x2500 && c <= 0x257f);
const isRuleChar = (c: number): boolean => c === 0x2d || c === 0x3d || (c >= 0x2500 && c <= 0x257f);

/** Where a border line starting at `i` ends (at its line break), or `i` when the line is no border. */
function borderLineEnd(text: string, i: number): number {
  let rules = 0;
  let j = i;
  for (; j < text.length && isBorderChar(text.charCodeAt(j)); j++) if (isRuleChar(text.charCodeAt(j))) rules++;
  const end = text.charCodeAt(j);
  const atLineEnd = j === text.length || end === LF || end === 0x0d || (end === BACKSLASH && isEscapeLetter(text.charCodeAt(j + 1)));
  return rules >= 3 && atLineEnd ? j : i;
}

/** Where a border line ending before `i` (exclusive) begins, or `i` when the line is no border. */
function borderLineStart(text: string, i: number): number {
  let rules = 0;
  let j = i - 1;
  for (; j >= 0 && isBorderChar(text.charCodeAt(j)); j--) if (isRuleChar(text.charCodeAt(j))) rules++;
  const before = text.charCodeAt(j);
  const atLineStart = j < 0 || before === LF || before === 0x0d || (isEscapeLetter(before) && text.charCodeAt(j - 1) === BACKSLASH);
  return rules >= 3 && atLineStart ? j + 1 : i;
}

/**
 * The position after the wrapping that starts at `i` (`i` when none): line breaks, indentation,
 * column borders, whole border lines, escaped line breaks (\n, \\n), a line continuation (\).
 */
function skipWrapping(text: string, i: number): number {
  let at = i;
  for (;;) {
    const c = text.charCodeAt(at);
    if (c === BACKSLASH) {
      let next = at + 1;
      while (text.charCodeAt(next) === BACKSLASH) next++;
      const d = text.charCodeAt(next);
      if (isEscapeLetter(d)) at = d === 0x6e ? borderLineEnd(text, next + 1) : next + 1;
      else if (isWrappingChar(d)) at = next;
      else return at;
    } else if (isWrappingChar(c)) at = c === LF ? borderLineEnd(text, at + 1) : at + 1;
    else return at;
  }
}

/** The position before the wrapping that ends at `i` (inclusive; `i` when none), read backwards. */
function skipWrappingBack(text: string, i: number): number {
  let at = i;
  for (;;) {
    const c = text.charCodeAt(at);
    if (isEscapeLetter(c) && text.charCodeAt(at - 1) === BACKSLASH) {
      at -= 2;
      while (text.charCodeAt(at) === BACKSLASH) at--;
      if (c === 0x6e) at = borderLineStart(text, at + 1) - 1;
    } else if (c === BACKSLASH && at < i) at--;
    else if (isWrappingChar(c)) at = c === LF ? borderLineStart(text, at) - 1 : at - 1;
    else return at;
  }
}

/** One secret as the index knows it. */
interface Secret {
  value: string;
  /** Where its secret part begins: after a signed JWT's payload, else 0. */
  from: number;
  /** How many characters of the secret part a piece must hold to be masked (MIN_SECRET_PIECE, or the whole part when shorter). */
  need: number;
  /** Its window keys, as indexed (to take them out again). */
  keys: number[];
}

/** A signed JWT (three parts): its header and payload are readable to anyone, its signature is the secret. */
const SIGNED_JWT = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/;

function secretOf(value: string): Secret {
  const signature = SIGNED_JWT.test(value) ? value.lastIndexOf('.') + 1 : 0;
  // A signature too short to be looked up by a window is looked up with the rest of the token.
  const from = value.length - signature >= WINDOW ? signature : 0;
  return { value, from, need: Math.min(MIN_SECRET_PIECE, value.length - from), keys: [] };
}

/** The window key of `text` at `i` (WINDOW token characters), or -1 when one is no token character. */
function windowKey(text: string, i: number): number {
  let key = 0;
  for (let j = i; j < i + WINDOW; j++) {
    const c = text.charCodeAt(j);
    const code = CODE[c]!;
    if (code === 0 || Number.isNaN(c)) return -1;
    key = (key << 7) | code;
  }
  return key;
}

/** A run of the text's characters that are the secret's characters [secretStart, secretStart + (end - start)). */
interface Run {
  start: number;
  end: number;
  secretStart: number;
}

/** Known secrets, indexed to find their pieces in any text. Secrets are added and taken out one by one. */
export class SecretPieces {
  private readonly secrets = new Map<string, Secret>();
  /** Window key → the secrets and offsets where it stands, as [secret, offset, secret, offset, …]. */
  private readonly windows = new Map<number, Array<Secret | number>>();
  /** One bit per filter slot, set when an indexed window falls in it: most of a text's windows are ruled out here. */
  private filter = new Int32Array((1 << MIN_FILTER_BITS) >>> 5);
  /** How many indexed windows fall in each filter slot (read only as secrets come and go). */
  private slotCounts = new Uint16Array(1 << MIN_FILTER_BITS);
  private filterBits = MIN_FILTER_BITS;
  /** The windows indexed, all secrets together (what the filter's size follows). */
  private windowCount = 0;
  /**
   * Texts read since the last secret was added that hold no piece of any, by length: traffic
   * repeats its header values and many of its bodies, and one is not read again for the same
   * secrets (taking a secret out leaves them clean). Compared whole with a text of the same
   * length, which costs far less than reading it, or than hashing it into a set.
   */
  private clean = new Map<number, string[]>();
  private cleanCount = 0;

  /**
   * `maxFilterBits`: the filter grows with the windows it holds (SLOTS_PER_WINDOW slots each; a
   * JWT's signature has 339), up to 2^maxFilterBits slots: 16 for one exchange's few secrets,
   * more for a session's (KnownSecrets, up to 1000).
   */
  constructor(private readonly maxFilterBits = 16) {}

  /** An index of a few secrets (one exchange's). */
  static of(values: Iterable<string>): SecretPieces {
    const pieces = new SecretPieces();
    for (const value of values) pieces.add(value);
    return pieces;
  }

  get size(): number {
    return this.secrets.size;
  }

  has(value: string): boolean {
    return this.secrets.has(value);
  }

  add(value: string): void {
    if (this.secrets.has(value) || value.length < WINDOW) return;
    const secret = secretOf(value);
    for (let i = secret.from; i + WINDOW <= value.length; i++) {
      const key = windowKey(value, i);
      if (key === -1) continue;
      const list = this.windows.get(key);
      if (list) list.push(secret, i);
      else this.windows.set(key, [secret, i]);
      secret.keys.push(key);
    }
    this.secrets.set(value, secret);
    this.windowCount += secret.keys.length;
    if (!this.grow()) this.countInFilter(secret.keys, 1);
    this.forgetClean();
  }

  delete(value: string): void {
    const secret = this.secrets.get(value);
    if (!secret) return;
    this.secrets.delete(value);
    for (const key of new Set(secret.keys)) {
      const list = this.windows.get(key)!;
      const kept: Array<Secret | number> = [];
      for (let i = 0; i < list.length; i += 2) if (list[i] !== secret) kept.push(list[i]!, list[i + 1]!);
      if (kept.length === 0) this.windows.delete(key);
      else this.windows.set(key, kept);
    }
    this.windowCount -= secret.keys.length;
    this.countInFilter(secret.keys, -1);
  }

  /**
   * Adds `step` to the counts of the slots of `keys`, and sets each slot's bit while its count is
   * above 0; a count that reached its top stays there (it no longer knows how many it holds).
   */
  private countInFilter(keys: readonly number[], step: 1 | -1): void {
    const counts = this.slotCounts;
    for (const key of keys) {
      const slot = filterSlot(key, this.filterBits);
      if (counts[slot]! < 0xffff) counts[slot]! += step;
      if (counts[slot]! > 0) this.filter[slot >>> 5]! |= 1 << (slot & 31);
      else this.filter[slot >>> 5]! &= ~(1 << (slot & 31));
    }
  }

  /**
   * A larger filter, made afresh from every secret's windows, when the windows now indexed need
   * more slots than it has; false when it is large enough. As small as the windows allow, it
   * stays in the processor's cache between two texts: read once for every character of every
   * text the proxy masks, a filter of megabytes costs a cache miss on most of them.
   */
  private grow(): boolean {
    let bits = this.filterBits;
    while (bits < this.maxFilterBits && this.windowCount * SLOTS_PER_WINDOW > 1 << bits) bits++;
    if (bits === this.filterBits) return false;
    this.filterBits = bits;
    this.filter = new Int32Array((1 << bits) >>> 5);
    this.slotCounts = new Uint16Array(1 << bits);
    for (const secret of this.secrets.values()) this.countInFilter(secret.keys, 1);
    return true;
  }

  /** `text` with every piece of the secrets masked (maskRun), or `text` itself when it holds none. */
  mask(text: string, maskRun: (piece: string) => string): string {
    if (this.secrets.size === 0) return text;
    const remembered = text.length <= CLEAN_TEXT_LENGTH;
    if (remembered && this.isClean(text)) return text;
    let runs: Run[] | undefined;
    const bits = this.filterBits;
    const filter = this.filter;
    const end = text.length;
    let key = 0;
    let length = 0;
    for (let i = 0; i < end; i++) {
      const code = CODE[text.charCodeAt(i)]!;
      if (code === 0) {
        length = 0;
        continue;
      }
      key = ((key << 7) | code) & 0xfffffff;
      if (++length < WINDOW) continue;
      const slot = filterSlot(key, bits);
      if ((filter[slot >>> 5]! & (1 << (slot & 31))) === 0) continue;
      const list = this.windows.get(key);
      if (!list) continue;
      for (let k = 0; k < list.length; k += 2) {
        const found = this.follow(text, i + 1 - WINDOW, list[k] as Secret, list[k + 1] as number);
        if (!found) continue;
        (runs ??= []).push(...found.runs);
        // Go on after the piece.
        i = found.end - 1;
        length = 0;
        break;
      }
    }
    if (runs) return maskRuns(text, runs, maskRun);
    if (remembered) this.rememberClean(text);
    return text;
  }

  /** Whether `text` was found clean; one found again goes first among those of its length. */
  private isClean(text: string): boolean {
    const sameLength = this.clean.get(text.length);
    if (sameLength === undefined) return false;
    const at = sameLength.indexOf(text);
    if (at === -1) return false;
    if (at > 0) {
      sameLength.splice(at, 1);
      sameLength.unshift(text);
    }
    return true;
  }

  /**
   * Remembers a text found clean, first among those of its length: a body whose every version
   * differs (a timestamp in it) has the same length each time, and pushes out only its own older
   * versions (at most CLEAN_OF_ONE_LENGTH are kept). Once CLEAN_TEXTS are remembered, they are
   * forgotten all together, and the texts traffic repeats come back first.
   */
  private rememberClean(text: string): void {
    if (this.cleanCount >= CLEAN_TEXTS) this.forgetClean();
    const sameLength = this.clean.get(text.length) ?? [];
    if (sameLength.length === 0) this.clean.set(text.length, sameLength);
    sameLength.unshift(text);
    if (sameLength.length > CLEAN_OF_ONE_LENGTH) sameLength.pop();
    else this.cleanCount++;
  }

  private forgetClean(): void {
    if (this.cleanCount === 0) return;
    this.clean = new Map();
    this.cleanCount = 0;
  }

  /** The piece of `secret` around the window at `start` (its characters from `offset`), when it is long enough to mask. */
  private follow(text: string, start: number, secret: Secret, offset: number): { runs: Run[]; end: number } | undefined {
    const value = secret.value;
    const runs: Run[] = [];
    // Forwards from the window, then backwards from it.
    let run: Run = { start, end: start + WINDOW, secretStart: offset };
    let s = offset + WINDOW;
    for (let t = run.end; s < value.length; ) {
      if (text.charCodeAt(t) === value.charCodeAt(s)) {
        t++;
        s++;
        run.end = t;
        continue;
      }
      const after = skipWrapping(text, t);
      if (after === t || !matchesAt(text, after, value, s, Math.min(AFTER_WRAP, value.length - s))) break;
      runs.push(run);
      run = { start: after, end: after, secretStart: s };
      t = after;
    }
    runs.push(run);
    const end = run.end;
    const last = s;
    let first = runs[0]!;
    s = offset;
    for (let t = start - 1; s > 0; ) {
      if (t >= 0 && text.charCodeAt(t) === value.charCodeAt(s - 1)) {
        first.start = t;
        first.secretStart = --s;
        t--;
        continue;
      }
      const before = skipWrappingBack(text, t);
      const need = Math.min(AFTER_WRAP, s);
      if (before === t || before + 1 < need || !matchesAt(text, before + 1 - need, value, s - need, need)) break;
      first = { start: before + 1, end: before + 1, secretStart: s };
      runs.unshift(first);
      t = before;
    }
    const whole = s === 0 && last === value.length;
    const secretChars = last - Math.max(s, secret.from);
    if (!whole && secretChars < secret.need) return undefined;
    return { runs: whole ? runs : secretPart(runs, secret.from), end };
  }
}

function matchesAt(text: string, at: number, value: string, from: number, count: number): boolean {
  for (let i = 0; i < count; i++) if (text.charCodeAt(at + i) !== value.charCodeAt(from + i)) return false;
  return true;
}

/** The runs cut to the secret's secret part (a JWT's signature): what lies before it stays readable. */
function secretPart(runs: Run[], from: number): Run[] {
  const out: Run[] = [];
  for (const run of runs) {
    const skip = Math.max(0, from - run.secretStart);
    if (run.start + skip < run.end) out.push({ start: run.start + skip, end: run.end, secretStart: run.secretStart + skip });
  }
  return out;
}

function maskRuns(text: string, runs: Run[], maskRun: (piece: string) => string): string {
  runs.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const run of runs) {
    if (run.start < at) continue;
    out += text.slice(at, run.start) + maskRun(text.slice(run.start, run.end));
    at = run.end;
  }
  return out + text.slice(at);
}
