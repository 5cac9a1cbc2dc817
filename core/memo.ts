// Remembering what is worked out from values traffic repeats: the same bearer token, secret
// header or decoded claims arrive with thousands of exchanges, and judging is the hot path.

/**
 * The values computed for the last few keys. A key compared with a recent one costs less than
 * hashing it into a map when keys are long (tokens, credentials), and traffic mostly repeats
 * its recent ones.
 */
export class RecentValues<V> {
  private readonly keys: string[] = [];
  private readonly values: V[] = [];

  constructor(
    private readonly size: number,
    private readonly compute: (key: string) => V,
  ) {}

  get(key: string): V {
    for (let i = 0; i < this.keys.length; i++) if (this.keys[i] === key) return this.values[i]!;
    const value = this.compute(key);
    this.keys.unshift(key);
    this.values.unshift(value);
    if (this.keys.length > this.size) {
      this.keys.pop();
      this.values.pop();
    }
    return value;
  }
}

/**
 * `compute`, remembered per frozen object: objects the engine shares between exchanges (a
 * token's claims, its scopes) are frozen, so what is worked out from them cannot go stale.
 * Other objects are computed afresh each time.
 */
export function perFrozenObject<K extends object, V>(compute: (key: K) => V): (key: K) => V {
  const memo = new WeakMap<K, { value: V }>();
  return (key) => {
    if (!Object.isFrozen(key)) return compute(key);
    let entry = memo.get(key);
    if (!entry) memo.set(key, (entry = { value: compute(key) }));
    return entry.value;
  };
}

/**
 * A value made on first use and the same ever after: what the kit ships (catalogs, schemas,
 * compiled validators) and slow set-ups. With perKey, perFrozenObject and RecentValues, the one
 * shape a module-level cache may take (test/module-state.test.ts): it cannot change what anything decides.
 */
export function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/**
 * `compute`, remembered for the last `size` keys used (the oldest forgotten first): for pure
 * work on values traffic repeats (a token decoded, an operation's plan of checks).
 */
export function perKey<K, V>(size: number, compute: (key: K) => V): (key: K) => V {
  const memo = new Map<K, V>();
  return (key) => {
    let value = memo.get(key);
    if (value === undefined && !memo.has(key)) {
      value = compute(key);
      if (memo.size >= size) memo.delete(memo.keys().next().value as K);
      memo.set(key, value);
    }
    return value as V;
  };
}
