// A map whose values are kept per height, so queries can read the state as of any committed height.

interface Version<V> {
  height: number;
  value: V;
}

/**
 * Key → value history. `set` appends a version at a height no lower than the key's last one;
 * `get(key, h)` returns the latest version at or below `h`. Memory grows with changes only.
 */
export class VersionedMap<V> {
  readonly #history = new Map<string, Version<V>[]>();

  get(key: string, height = Number.POSITIVE_INFINITY): V | undefined {
    const versions = this.#history.get(key);
    if (versions === undefined) return undefined;
    return versions.findLast((version) => version.height <= height)?.value;
  }

  set(key: string, height: number, value: V): void {
    const versions = this.#history.get(key);
    if (versions === undefined) {
      this.#history.set(key, [{ height, value }]);
      return;
    }
    const last = versions.at(-1);
    if (last === undefined) {
      versions.push({ height, value });
      return;
    }
    if (height < last.height) {
      throw new RangeError(`version at height ${height} is older than ${last.height} for ${key}`);
    }
    if (height === last.height) last.value = value;
    else versions.push({ height, value });
  }

  /** Every key that had a value at or below `height`, with that value. */
  *entries(height = Number.POSITIVE_INFINITY): Generator<[string, V]> {
    for (const key of this.#history.keys()) {
      const value = this.get(key, height);
      if (value !== undefined) yield [key, value];
    }
  }
}
