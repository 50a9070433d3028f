// Loops in a jump graph (chain → chains it jumps or goes to). The kernel refuses a rule that
// closes a loop (ELOOP, "Too many links") for iptables and nftables alike — a loop it can reach
// from a built-in (base) chain: x_tables and nf_tables both walk the graph from the hooks, so a
// loop among chains nothing jumps to is accepted, and so it is here.

/** One jump: the rule that makes it, by line and text. */
export interface JumpEdge {
  readonly to: string;
  /** Orders edges: the loop is reported at its largest. */
  readonly line: number;
  readonly text: string;
  /** Anything the caller wants back with the reported edge. */
  readonly ref?: unknown;
  /** The node of `to` in a JumpGraph, when the caller has it (saves a lookup). */
  readonly node?: JumpNode;
}

type Edge = JumpEdge;

/**
 * A chain (or map) of the graph: its jumps, its state in the search (0 unseen, 1 on the stack,
 * 2 done), and room for the caller's own facts about it, so one lookup by name serves all.
 */
export interface JumpNode {
  readonly name: string;
  readonly out: Edge[];
  state: 0 | 1 | 2;
  /** The caller's: e.g. that the chain is declared. */
  known: boolean;
  /** The caller's: e.g. where the chain was first used (`where`: the caller's own locator). */
  firstUse: { lineNo: number; text: string; jump: boolean; where?: unknown } | undefined;
}

/**
 * A jump graph built edge by edge, searched with at most one lookup per edge (none when the
 * edge names its node): a 10,000-Service table has hundreds of thousands of jumps.
 */
export class JumpGraph {
  readonly nodes = new Map<string, JumpNode>();

  /** The node named `name` (created, unknown and jumping nowhere, when new). */
  node(name: string): JumpNode {
    let n = this.nodes.get(name);
    if (!n) {
      n = { name, out: [], state: 0, known: false, firstUse: undefined };
      this.nodes.set(name, n);
    }
    return n;
  }

  /** The jumps out of `from`, to push onto (created empty). */
  from(from: string): Edge[] {
    return this.node(from).out;
  }

  /**
   * A cycle reachable from `roots`, reported at its last-written edge (the rule whose append
   * the kernel would refuse); iterative, so 10,000-chain tables cannot exhaust the stack. A
   * chain that jumps nowhere cannot be on a cycle and is not visited.
   */
  findLoop(roots: Iterable<string>):
    { path: string[]; line: number; text: string; ref?: unknown } | undefined {
    for (const root of roots) {
      const r = this.nodes.get(root);
      if (!r || r.state !== 0) continue;
      const stack: { name: string; node: JumpNode; next: number; via?: Edge }[] =
        [{ name: root, node: r, next: 0 }];
      r.state = 1;
      while (stack.length > 0) {
        const top = stack[stack.length - 1]!;
        const out = top.node.out;
        if (top.next >= out.length) {
          top.node.state = 2;
          stack.pop();
          continue;
        }
        const e = out[top.next++]!;
        const to = e.node ?? this.nodes.get(e.to);
        if (!to) continue;
        if (to.state === 1) {
          const from = stack.findIndex((f) => f.node === to);
          const cycle = stack.slice(from);
          const last = [...cycle.slice(1).map((f) => f.via!), e]
            .reduce((x, y) => (y.line > x.line ? y : x));
          return { path: [...cycle.map((f) => f.name), e.to], line: last.line, text: last.text,
            ref: last.ref };
        }
        if (to.state === 0) {
          to.state = 1;
          stack.push({ name: e.to, node: to, next: 0, via: e });
        }
      }
    }
    return undefined;
  }
}
