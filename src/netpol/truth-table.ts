// Upstream's e2e TruthTable and Reachability (test/e2e/network/netpol/{truthtable,
// reachability}.go): an n×n table of booleans keyed by `ns/pod`, printed as upstream's
// PrettyPrint (header `-` then the tos, tab-separated; `.` connected, `X` blocked, `?` unset),
// compared ignoring loopback as upstream's Summary does.

export class TruthTable {
  readonly values = new Map<string, Map<string, boolean>>();
  constructor(readonly froms: readonly string[], readonly tos: readonly string[],
    defaultValue?: boolean) {
    for (const f of froms) {
      const row = new Map<string, boolean>();
      if (defaultValue !== undefined) for (const t of tos) row.set(t, defaultValue);
      this.values.set(f, row);
    }
  }

  set(from: string, to: string, v: boolean): void {
    const row = this.values.get(from);
    if (!row) throw new RangeError(`from-key ${from} not found`);
    if (!this.tos.includes(to)) throw new RangeError(`to-key ${to} not allowed`);
    row.set(to, v);
  }

  get(from: string, to: string): boolean | undefined {
    return this.values.get(from)?.get(to);
  }

  setAllFrom(from: string, v: boolean): void {
    for (const t of this.tos) this.set(from, t, v);
  }

  setAllTo(to: string, v: boolean): void {
    for (const f of this.froms) this.set(f, to, v);
  }

  prettyPrint(indent = ''): string {
    const lines = [indent + ['-', ...this.tos].join('\t')];
    for (const f of this.froms) {
      const cells = this.tos.map((t) => {
        const v = this.get(f, t);
        return v === undefined ? '?' : v ? '.' : 'X';
      });
      lines.push(indent + [f, ...cells].join('\t'));
    }
    return lines.join('\n');
  }

  /** Cell-wise equality table (`.` = same), as upstream's Compare. */
  compare(other: TruthTable): TruthTable {
    const out = new TruthTable(this.froms, this.tos);
    for (const f of this.froms) {
      for (const t of this.tos) {
        const a = this.get(f, t);
        const b = other.get(f, t);
        if (a !== undefined && b !== undefined) out.set(f, t, a === b);
      }
    }
    return out;
  }

  /** Parses prettyPrint output (whitespace-separated). */
  static parse(text: string): TruthTable {
    const rows = text.trim().split('\n').map((l) => l.trim().split(/\s+/));
    const tos = rows[0]!.slice(1);
    const t = new TruthTable(rows.slice(1).map((r) => r[0]!), tos);
    for (const r of rows.slice(1)) {
      tos.forEach((to, i) => {
        const m = r[i + 1];
        if (m === '.' || m === 'X') t.set(r[0]!, to, m === '.');
        else if (m !== '?') throw new RangeError(`bad mark ${String(m)} in row ${r[0]}`);
      });
    }
    return t;
  }
}

/** Matches pods by namespace and/or name; an empty field is a wildcard (upstream Peer). */
export interface Peer {
  readonly namespace?: string;
  readonly pod?: string;
}

const matches = (p: Peer, key: string): boolean => {
  const [ns, name] = key.split('/');
  return (!p.namespace || p.namespace === ns) && (!p.pod || p.pod === name);
};

/** Upstream's Reachability.Expected builder. */
export class Reachability {
  readonly expected: TruthTable;
  constructor(readonly pods: readonly string[], defaultExpectation: boolean) {
    this.expected = new TruthTable(pods, pods, defaultExpectation);
  }

  allowLoopback(): this {
    for (const p of this.pods) this.expected.set(p, p, true);
    return this;
  }

  expect(from: string, to: string, v: boolean): this {
    this.expected.set(from, to, v);
    return this;
  }

  expectAllIngress(pod: string, v: boolean): this {
    this.expected.setAllTo(pod, v);
    return this;
  }

  expectAllEgress(pod: string, v: boolean): this {
    this.expected.setAllFrom(pod, v);
    return this;
  }

  expectPeer(from: Peer, to: Peer, v: boolean): this {
    for (const f of this.pods) {
      if (!matches(from, f)) continue;
      for (const t of this.pods) if (matches(to, t)) this.expected.set(f, t, v);
    }
    return this;
  }
}

export interface Summary {
  readonly correct: number;
  readonly incorrect: number;
  readonly ignored: number;
  readonly comparison: TruthTable;
  /** Upstream's log line: `reachability: correct:N, incorrect:M, result=<bool>`. */
  readonly line: string;
}

/** Upstream Summary(ignoreLoopback=true): loopback cells are never failures. */
export function summarize(expected: TruthTable, observed: TruthTable): Summary {
  const comparison = expected.compare(observed);
  let correct = 0;
  let incorrect = 0;
  let ignored = 0;
  for (const f of expected.froms) {
    for (const t of expected.tos) {
      if (f === t) ignored++;
      else if (comparison.get(f, t)) correct++;
      else incorrect++;
    }
  }
  const line = `reachability: correct:${correct}, incorrect:${incorrect}, `
    + `result=${incorrect === 0}`;
  return { correct, incorrect, ignored, comparison, line };
}
