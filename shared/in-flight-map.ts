/**
 * A map from string keys to entries that each live about as long as one request, held by an owner
 * that lives as long as the process: a web pod's awaited replies, a worker's running jobs.
 *
 * Not a `Map`, for the garbage collector's sake (docs/benchmark.md, issue 29, seventeenth session).
 * When a `Map` grows, shrinks or compacts, V8 (Node 20) copies its live entries into a new hash table
 * and leaves the old table linked to the new one with its entries in place (iterators opened before
 * follow that link). A Map that lives as long as the process has its tables promoted to the old
 * generation, and there an old table, live or not, is a root of every young-generation collection
 * until the next full one: it keeps its successor table and every entry of both alive, and with them
 * everything an entry reaches (a request's handlers, closures, `req` and `res`). Those requests are
 * then copied by each scavenge and promoted although they have ended, and the successor table gets
 * promoted too and holds the next ones. Measured in the web pod at JSON c64 with the pod's awaited
 * replies in a `Map`: ~90 % of what survived one scavenge was promoted at the next (1.7 MB a scavenge,
 * 16 ms scavenges); in a plain node server holding its pending responses in a `Map`, 2 MB promoted a
 * scavenge against 14 KB with them in a null-prototype object (below).
 *
 * A null-prototype object is a hash table too (V8 makes it a dictionary from the start), and one that
 * replaces its table leaves the old one behind as plain garbage. Lookups cost the same as a Map's.
 */
export class InFlightMap<V> {
  private table = Object.create(null) as Record<string, V>;
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(key: string): boolean {
    return key in this.table;
  }

  get(key: string): V | undefined {
    return this.table[key];
  }

  set(key: string, value: V): this {
    if (!(key in this.table)) this.count++;
    this.table[key] = value;
    return this;
  }

  delete(key: string): boolean {
    if (!(key in this.table)) return false;
    delete this.table[key];
    this.count--;
    return true;
  }

  /** The keys now (a copy: the map may change while they are walked). */
  keys(): string[] {
    return Object.keys(this.table);
  }

  /** The values now (a copy, as `keys`). */
  values(): V[] {
    return Object.values(this.table);
  }

  /** The entries now (a copy, as `keys`). */
  entries(): Array<[string, V]> {
    return Object.entries(this.table);
  }

  clear(): void {
    this.table = Object.create(null) as Record<string, V>;
    this.count = 0;
  }
}
