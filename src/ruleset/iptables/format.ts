// Formatter for the iptables model: the exact text `parse` read (`format(parse(x)) === x`).

import type { Counters, IptablesDocument, IptablesLine } from './model.js';

/** Quotes a word as iptables-save does: only when it is empty or holds blanks or quotes. */
export function quoteArg(a: string): string {
  if (a !== '' && !/[\s"'\\]/.test(a)) return a;
  return `"${a.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

export function formatArgs(args: readonly string[]): string {
  return args.map(quoteArg).join(' ');
}

const counters = (c?: Counters) => (c ? `[${c.packets}:${c.bytes}]` : '');

export function formatLine(l: IptablesLine): string {
  switch (l.kind) {
    case 'comment': return l.text;
    case 'table': return `*${l.name}`;
    case 'chain': return `:${l.name} ${l.policy}${l.counters ? ` ${counters(l.counters)}` : ''}`;
    case 'commit': return 'COMMIT';
    case 'chain-op': return l.chain === undefined ? l.op : `${l.op} ${l.chain}`;
    case 'rule': {
      const head = [l.op, l.chain, ...(l.position !== undefined ? [String(l.position)] : [])];
      const rest = l.raw ?? formatArgs(l.args);
      const text = rest === '' ? head.join(' ') : `${head.join(' ')} ${rest}`;
      return l.counters ? `${counters(l.counters)} ${text}` : text;
    }
  }
}

export function format(doc: IptablesDocument): string {
  const text = doc.lines.map(formatLine).join('\n');
  return doc.trailingNewline ? `${text}\n` : text;
}
