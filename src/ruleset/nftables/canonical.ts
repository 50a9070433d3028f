// Upstream's canonical order for comparing nftables dumps (sortNFTablesTransaction in
// pkg/proxy/nftables/helpers_test.go): by object type (table, chain, rule, set, map, element),
// then by object name; rules keep their relative order, other lines sort by their text.

const OBJECT_ORDER: Readonly<Record<string, number>> = {
  table: 10,
  chain: 9,
  rule: 8,
  set: 7,
  map: 6,
  element: 5,
};

interface Line {
  readonly text: string;
  readonly words: readonly string[];
  readonly index: number;
}

function compare(a: Line, b: Line): number {
  if (a.words.length < 5 || b.words.length < 5) return a.index - b.index;
  const ta = a.words[1]!;
  const tb = b.words[1]!;
  if (ta !== tb) return (OBJECT_ORDER[tb] ?? 0) - (OBJECT_ORDER[ta] ?? 0) || (ta < tb ? -1 : 1);
  const na = a.words[4]!;
  const nb = b.words[4]!;
  if (na !== nb) return na < nb ? -1 : 1;
  if (ta === 'rule' || a.text === b.text) return a.index - b.index;
  return a.text < b.text ? -1 : 1;
}

/** Drop blank and `#` lines and sort the rest canonically; the result ends with a newline. */
export function sortTransactionText(text: string): string {
  const lines: Line[] = [];
  for (const raw of text.split('\n')) {
    if (raw === '' || raw.startsWith('#')) continue;
    lines.push({ text: raw, words: raw.split(' '), index: lines.length });
  }
  lines.sort(compare);
  return lines.map((l) => l.text + '\n').join('');
}
