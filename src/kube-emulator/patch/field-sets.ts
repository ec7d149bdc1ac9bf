// Field sets as structured-merge-diff keeps them (sigs.k8s.io/structured-merge-diff/v4
// fieldpath): a trie whose keys are path elements in their FieldsV1 form — `f:<field or map
// key>`, `k:{"name":"c"}` for an item of an associative list, `v:<json>` for an item of a set —
// and whose nodes may be members. FieldsV1 JSON is this trie: `{}` a member leaf, `.` a member
// that also has children.

export class FieldSet {
  member = false;
  readonly children = new Map<string, FieldSet>();

  static fromFieldsV1(value: unknown): FieldSet {
    const set = new FieldSet();
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return set;
    for (const [key, child] of Object.entries(value)) {
      if (key === '.') set.member = true;
      else {
        const node = FieldSet.fromFieldsV1(child);
        if (Object.keys(child as object).length === 0) node.member = true;
        set.children.set(key, node);
      }
    }
    return set;
  }

  /** The FieldsV1 JSON of this set (the root's own membership is not encoded). */
  toFieldsV1(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const keys = [...this.children.keys()].sort();
    for (const key of keys) {
      const child = this.children.get(key);
      if (child === undefined || child.isEmpty()) continue;
      const encoded = child.toFieldsV1();
      if (child.member && Object.keys(encoded).length > 0) out[key] = { '.': {}, ...encoded };
      else out[key] = encoded;
    }
    return out;
  }

  isEmpty(): boolean {
    if (this.member) return false;
    for (const child of this.children.values()) if (!child.isEmpty()) return false;
    return true;
  }

  child(key: string): FieldSet {
    let node = this.children.get(key);
    if (node === undefined) {
      node = new FieldSet();
      this.children.set(key, node);
    }
    return node;
  }

  insert(path: readonly string[]): void {
    const [first, ...rest] = path;
    if (first === undefined) this.member = true;
    else this.child(first).insert(rest);
  }

  has(path: readonly string[]): boolean {
    const [first, ...rest] = path;
    if (first === undefined) return this.member;
    return this.children.get(first)?.has(rest) ?? false;
  }

  /** Every member path. */
  paths(prefix: string[] = []): string[][] {
    const out: string[][] = [];
    if (this.member) out.push(prefix);
    for (const [key, child] of this.children) out.push(...child.paths([...prefix, key]));
    return out;
  }

  union(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member || other.member;
    for (const key of new Set([...this.children.keys(), ...other.children.keys()])) {
      const a = this.children.get(key);
      const b = other.children.get(key);
      const merged = a === undefined ? b?.copy() : b === undefined ? a.copy() : a.union(b);
      if (merged !== undefined) out.children.set(key, merged);
    }
    return out;
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member && other.member;
    for (const [key, a] of this.children) {
      const b = other.children.get(key);
      if (b !== undefined) out.children.set(key, a.intersection(b));
    }
    return out;
  }

  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member && !other.member;
    for (const [key, a] of this.children) {
      const b = other.children.get(key);
      out.children.set(key, b === undefined ? a.copy() : a.difference(b));
    }
    return out;
  }

  copy(): FieldSet {
    return this.union(new FieldSet());
  }
}

/** A path as fieldpath.Path.String() prints it: `.spec.containers[name="c"].image`. */
export function pathString(path: readonly string[]): string {
  return path
    .map((key) => {
      const kind = key.slice(0, 2);
      const rest = key.slice(2);
      if (kind === 'f:') return `.${rest}`;
      if (kind === 'k:') {
        const fields = JSON.parse(rest) as Record<string, unknown>;
        return `[${Object.entries(fields)
          .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
          .join(',')}]`;
      }
      if (kind === 'v:') return `[=${rest}]`;
      if (kind === 'i:') return `[${rest}]`;
      return key;
    })
    .join('');
}
