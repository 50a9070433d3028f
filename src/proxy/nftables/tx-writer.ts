// Writes transaction lines in knftables' exact text form, straight to strings (the proxier
// emits hundreds of thousands of lines for large clusters, so no intermediate objects).

import { quote } from '../../ruleset/nftables/tokens.js';

export class TxWriter {
  readonly lines: string[] = [];
  private readonly t: string;

  /** `family` is `ip` or `ip6`; `table` the table name. */
  constructor(family: string, table: string) {
    this.t = `${family} ${table}`;
  }

  get length(): number {
    return this.lines.length;
  }

  addTable(comment: string): void {
    this.lines.push(`add table ${this.t} { comment ${quote(comment)} ; }`);
  }

  addChain(name: string, props?: { type: string; hook: string; priority: number }): void {
    this.lines.push(props
      ? `add chain ${this.t} ${name} { type ${props.type} hook ${props.hook} priority ${props.priority} ; }`
      : `add chain ${this.t} ${name}`);
  }

  addChainWithComment(name: string, comment: string): void {
    this.lines.push(`add chain ${this.t} ${name} { comment ${quote(comment)} ; }`);
  }

  flush(object: 'chain' | 'set' | 'map', name: string): void {
    this.lines.push(`flush ${object} ${this.t} ${name}`);
  }

  delete(object: 'chain' | 'set' | 'map' | 'table', name: string): void {
    this.lines.push(object === 'table' ? `delete table ${this.t}` : `delete ${object} ${this.t} ${name}`);
  }

  addRule(chain: string, rule: string, comment?: string): void {
    this.lines.push(comment === undefined
      ? `add rule ${this.t} ${chain} ${rule}`
      : `add rule ${this.t} ${chain} ${rule} comment ${quote(comment)}`);
  }

  /** `props` is the text inside the braces, e.g. `type ipv4_addr ; comment "x" ;`. */
  addSetOrMap(object: 'set' | 'map', name: string, props: string): void {
    this.lines.push(`add ${object} ${this.t} ${name} { ${props} }`);
  }

  addElement(container: string, key: string, value?: string, comment?: string): void {
    let s = `add element ${this.t} ${container} { ${key}`;
    if (comment !== undefined) s += ` comment ${quote(comment)}`;
    if (value !== undefined) s += ` : ${value}`;
    this.lines.push(s + ' }');
  }

  deleteElement(container: string, key: string): void {
    this.lines.push(`delete element ${this.t} ${container} { ${key} }`);
  }

  text(): string {
    return this.lines.length === 0 ? '' : this.lines.join('\n') + '\n';
  }
}
