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
