// Base-chain priorities: `nft list` prints standard priorities by name (`dstnat - 10`,
// `filter`, `srcnat`) where the name is valid for the hook, and numbers otherwise; knftables
// and kdp write numbers. Values for the ip, ip6 and inet families.

const STANDARD: ReadonlyArray<readonly [string, number]> = [
  ['raw', -300], ['mangle', -150], ['dstnat', -100], ['filter', 0], ['security', 50],
  ['srcnat', 100],
];

function compatible(name: string, hook: string): boolean {
  if (name === 'dstnat') return hook === 'prerouting';
  if (name === 'srcnat') return hook === 'postrouting';
  return true;
}

/** `-110` | `dstnat - 10` | `filter` → number; undefined when not understood. */
export function parsePriority(text: string): number | undefined {
  const t = text.trim();
  if (/^-?\d+$/.test(t)) return Number(t);
  const m = /^([a-z]+)(?:\s*([+-])\s*(\d+))?$/.exec(t);
  const base = m ? STANDARD.find(([n]) => n === m[1]) : undefined;
  if (!m || !base) return undefined;
  const off = m[3] === undefined ? 0 : Number(m[3]) * (m[2] === '-' ? -1 : 1);
  return base[1] + off;
}

/** The priority as `nft list` prints it for a chain on `hook`. */
export function formatPriority(prio: number, hook: string): string {
  for (const [name, value] of STANDARD) {
    if (!compatible(name, hook)) continue;
    const off = prio - value;
    if (off === 0) return name;
    if (off > 0 && off <= 10) return `${name} + ${off}`;
    if (off < 0 && off >= -10) return `${name} - ${-off}`;
  }
  return String(prio);
}
