// Writes transaction lines in knftables' exact text form, straight to strings (the proxier
// emits hundreds of thousands of lines for large clusters, so no intermediate objects).

import { quote } from '../../ruleset/nftables/tokens.js';

/** `quote`, without its two regex passes when there is nothing to escape (the usual case). */
function quoted(s: string): string {
  return s.includes('"') || s.includes('\\') ? quote(s) : `"${s}"`;
}

export class TxWriter {
  /** Lines not yet folded into a chunk. */
  private lines: string[] = [];
  /**
   * Folded blocks of 256 lines (each ends with a newline); keeps few long-lived strings. Small
   * enough (~35 KB) to stay out of V8's large-object space, whose every object is a fresh
   * mapping: fresh pages to fault in, which on the development VM cost more than the copying.
   */
  private readonly chunks: string[] = [];
  private count = 0;
  private readonly t: string;
  /** `add rule ip kube-proxy ` etc.: one leaf per line instead of four. */
  private readonly ruleHead: string;
  private readonly chainHead: string;
  private readonly elementHead: string;

  /** `family` is `ip` or `ip6`; `table` the table name. */
  constructor(family: string, table: string) {
    this.t = `${family} ${table}`;
    this.ruleHead = `add rule ${this.t} `;
    this.chainHead = `add chain ${this.t} `;
    this.elementHead = `add element ${this.t} `;
  }

  /** Number of operations written. */
  get length(): number {
    return this.count;
  }

  private push(line: string): void {
    this.lines.push(line);
    this.count++;
    if (this.lines.length >= 256) {
      this.chunks.push(this.lines.join('\n') + '\n');
      this.lines = [];
    }
  }

  addTable(comment: string): void {
    this.push(`add table ${this.t} { comment ${quote(comment)} ; }`);
  }

  addChain(name: string, props?: { type: string; hook: string; priority: number }): void {
    this.push(props
      ? `add chain ${this.t} ${name} { type ${props.type} hook ${props.hook}`
        + ` priority ${props.priority} ; }`
      : this.chainHead + name);
  }

  addChainWithComment(name: string, comment: string): void {
    this.push(`add chain ${this.t} ${name} { comment ${quote(comment)} ; }`);
  }

  flush(object: 'chain' | 'set' | 'map', name: string): void {
    this.push(`flush ${object} ${this.t} ${name}`);
  }

  delete(object: 'chain' | 'set' | 'map' | 'table', name: string): void {
    this.push(object === 'table' ? `delete table ${this.t}` : `delete ${object} ${this.t} ${name}`);
  }

  addRule(chain: string, rule: string, comment?: string): void {
    this.push(comment === undefined
      ? `${this.ruleHead}${chain} ${rule}`
      : `${this.ruleHead}${chain} ${rule} comment ${quoted(comment)}`);
  }

  /** `props` is the text inside the braces, e.g. `type ipv4_addr ; comment "x" ;`. */
  addSetOrMap(object: 'set' | 'map', name: string, props: string): void {
    this.push(`add ${object} ${this.t} ${name} { ${props} }`);
  }

  addElement(container: string, key: string, value?: string, comment?: string): void {
    let s = `${this.elementHead}${container} { ${key}`;
    if (comment !== undefined) s += ` comment ${quoted(comment)}`;
    if (value !== undefined) s += ` : ${value}`;
    this.push(s + ' }');
  }

  deleteElement(container: string, key: string): void {
    this.push(`delete element ${this.t} ${container} { ${key} }`);
  }

  /**
   * The whole transaction. The folded chunks are concatenated with `+`, not joined: V8 keeps a
   * rope of them and copies the bytes once, when the text is consumed, instead of twice.
   */
  text(): string {
    let out = '';
    for (const c of this.chunks) out += c;
    return this.lines.length === 0 ? out : out + this.lines.join('\n') + '\n';
  }
}
