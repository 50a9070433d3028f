// Writes transaction lines in knftables' exact text form, straight to a TextSink (the proxier
// emits hundreds of thousands of lines for large clusters, so no intermediate objects).

import { quote } from '../../ruleset/nftables/tokens.js';
import { TextSink } from '../text-sink.js';

/** `quote`, without its two regex passes when there is nothing to escape (the usual case). */
function quoted(s: string): string {
  return s.includes('"') || s.includes('\\') ? quote(s) : `"${s}"`;
}

export class TxWriter {
  private count = 0;
  private readonly t: string;
  /** `add rule ip kube-proxy ` etc.: one leaf per line instead of four. */
  private readonly ruleHead: string;
  private readonly chainHead: string;
  private readonly elementHead: string;

  /**
   * `family` is `ip` or `ip6`; `table` the table name. `sink` (reset here) may be one the
   * proxier keeps across syncs; `expectedBytes` is a generous estimate of the text's size.
   */
  constructor(family: string, table: string, private readonly sink = new TextSink(),
    expectedBytes = 0) {
    this.t = `${family} ${table}`;
    this.ruleHead = `add rule ${this.t} `;
    this.chainHead = `add chain ${this.t} `;
    this.elementHead = `add element ${this.t} `;
    sink.reset(expectedBytes);
  }

  /** Number of operations written. */
  get length(): number {
    return this.count;
  }

  private push(line: string): void {
    this.sink.line(line);
    this.count++;
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

  /** The whole transaction (once; the sink is then free for the next one). */
  text(): string {
    return this.sink.text();
  }

  /** The whole transaction as `TextSink.finish` gives it (once, like `text`). */
  finish(): string | string[] {
    return this.sink.finish();
  }
}
