// Word-level helpers for nft text: splitting on blanks while keeping "quoted strings" whole,
// and Go-%q-compatible quoting (what knftables writes for comments).

/** Split on runs of blanks; a double-quoted string (with \" and \\ escapes) is one word. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
    if (i >= n) break;
    let j = i;
    while (j < n && text[j] !== ' ' && text[j] !== '\t') {
      if (text[j] === '"') j = endOfQuoted(text, j);
      else j++;
    }
    words.push(text.slice(i, j));
    i = j;
  }
  return words;
}

/** Index just past the closing quote of the string starting at `start` (a `"`). */
export function endOfQuoted(text: string, start: number): number {
  let j = start + 1;
  while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
  return Math.min(j + 1, text.length);
}

/** Go `%q` for the printable-ASCII strings kube-proxy uses (escapes `\` and `"`). */
export function quote(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Inverse of `quote`; returns undefined when `word` is not a quoted string. */
export function unquote(word: string): string | undefined {
  if (word.length < 2 || !word.startsWith('"') || !word.endsWith('"')) return undefined;
  return word.slice(1, -1).replace(/\\(.)/g, '$1');
}

/**
 * Split a rule body into tokens and a trailing `comment "..."`, if any.
 * `ip daddr 1.2.3.4 drop comment "x y"` → tokens [ip, daddr, 1.2.3.4, drop], comment `x y`.
 */
export function splitRuleComment(text: string): { tokens: string[]; comment?: string } {
  const words = splitWords(text);
  const n = words.length;
  if (n >= 2 && words[n - 2] === 'comment') {
    const c = unquote(words[n - 1]!);
    if (c !== undefined) return { tokens: words.slice(0, n - 2), comment: c };
  }
  return { tokens: words };
}

export function formatRuleBody(tokens: readonly string[], comment?: string): string {
  const body = tokens.join(' ');
  return comment === undefined ? body : `${body} comment ${quote(comment)}`;
}
