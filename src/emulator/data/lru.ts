/** A small LRU map of promises: concurrent gets of one key share one load; failures are not kept. */
export class PromiseLru<V> {
  private readonly map = new Map<string, Promise<V>>();
  constructor(private readonly capacity: number) {}

  get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.map.get(key);
    if (hit !== undefined) {
      this.map.delete(key);
      this.map.set(key, hit);
      return hit;
    }
    const p = load();
    this.map.set(key, p);
    p.catch(() => {
      if (this.map.get(key) === p) this.map.delete(key);
    });
    while (this.map.size > this.capacity) {
      const oldest = this.map.keys().next().value;
      if (oldest === undefined) break;
      this.map.delete(oldest);
    }
    return p;
  }

  clear(): void {
    this.map.clear();
  }
}
