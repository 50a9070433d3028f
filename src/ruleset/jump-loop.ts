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
}

type Edge = JumpEdge;

/** A chain and its jumps, with its state in the search (0 unseen, 1 on the stack, 2 done). */
interface Node {
  readonly out: Edge[];
  state: 0 | 1 | 2;
}

/**
 * A jump graph built edge by edge, searched with one lookup per edge (a 10,000-Service table has
 * hundreds of thousands of jumps).
 */
export class JumpGraph {
  private readonly nodes = new Map<string, Node>();

  /** The jumps out of `from`, to push onto (created empty). */
  from(from: string): Edge[] {
    let n = this.nodes.get(from);
    if (!n) this.nodes.set(from, (n = { out: [], state: 0 }));
    return n.out;
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
      const stack: { name: string; node: Node; next: number; via?: Edge }[] =
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
        const to = this.nodes.get(e.to);
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

const NO_EDGES: readonly Edge[] = [];

/**
 * A cycle reachable from `roots`, reported at its last-written edge (the rule whose append the
 * kernel would refuse); iterative, so 10,000-chain tables cannot exhaust the stack.
 */
export function findLoop(edges: ReadonlyMap<string, readonly Edge[]>, roots: Iterable<string>):
  { path: string[]; line: number; text: string; ref?: unknown } | undefined {
  const state = new Map<string, 1 | 2>(); // 1 on the stack, 2 done
  for (const root of roots) {
    if (state.has(root) || !edges.has(root)) continue;
    const stack: { node: string; next: number; via?: Edge }[] = [{ node: root, next: 0 }];
    state.set(root, 1);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const out = edges.get(top.node) ?? NO_EDGES;
      if (top.next >= out.length) {
        state.set(top.node, 2);
        stack.pop();
        continue;
      }
      const e = out[top.next++]!;
      const s = state.get(e.to);
      if (s === 1) {
        const from = stack.findIndex((f) => f.node === e.to);
        const cycle = stack.slice(from);
        const last = [...cycle.slice(1).map((f) => f.via!), e]
          .reduce((x, y) => (y.line > x.line ? y : x));
        return { path: [...cycle.map((f) => f.node), e.to], line: last.line, text: last.text,
          ref: last.ref };
      }
      if (s === undefined) {
        state.set(e.to, 1);
        stack.push({ node: e.to, next: 0, via: e });
      }
    }
  }
  return undefined;
}
