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
