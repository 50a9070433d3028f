// Upstream's static token file (`--token-auth-file`): CSV lines `token,user,uid[,"g1,g2"]`.
// Parsed like k8s.io/apiserver's tokenfile.NewCSV (encoding/csv, variable field counts, blank
// lines skipped, groups split on ','), except that a malformed line is a KDP_CONFIG naming it.

import { kdpError } from '../../errors.js';
import type { UserInfo } from '../pipeline-types.js';

export interface TokenEntry {
  readonly token: string;
  readonly user: UserInfo;
}

/** Splits one CSV record (RFC 4180 quoting, `""` escapes). Returns null on a quoting error. */
export function splitCsvLine(line: string): string[] | null {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    while (line[i] === ' ' || line[i] === '\t') i++; // csv.Reader.TrimLeadingSpace
    if (line[i] === '"') {
      let v = '';
      i++;
      for (;;) {
        if (i >= line.length) return null;
        if (line[i] === '"') {
          if (line[i + 1] === '"') { v += '"'; i += 2; continue; }
          i++;
          break;
        }
        v += line[i++];
      }
      if (i < line.length && line[i] !== ',') return null;
      out.push(v);
    } else {
      const end = line.indexOf(',', i);
      const v = line.slice(i, end < 0 ? line.length : end);
      if (v.includes('"')) return null;
      out.push(v);
      i = end < 0 ? line.length : end;
    }
    if (i >= line.length) return out;
    i++; // the comma
  }
}

/** Parses the file text. `path` only names the file in errors. */
export function parseTokenFile(text: string, path: string): TokenEntry[] {
  const entries: TokenEntry[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, idx) => {
    if (raw.trim() === '') return;
    const where = `token file ${path} line ${idx + 1}`;
    const rec = splitCsvLine(raw);
    if (rec === null) throw kdpError('KDP_CONFIG', `${where}: bad CSV quoting`);
    if (rec.length < 3) {
      throw kdpError('KDP_CONFIG', `${where}: must have at least 3 columns ` +
        `(token, user name, user uid), found ${rec.length}`);
    }
    const [token, name, uid, groups] = rec as [string, string, string, string?];
    if (token === '') return; // upstream warns and skips empty tokens
    const user: UserInfo = {
      name,
      ...(uid !== '' ? { uid } : {}),
      groups: groups !== undefined ? groups.split(',') : [],
    };
    entries.push({ token, user });
  });
  return entries;
}

function quote(field: string): string {
  return /[",\s]/.test(field) ? `"${field.replace(/"/g, '""')}"` : field;
}

/** One line in upstream's format; the groups column is always quoted, as the docs show it. */
export function formatTokenLine(e: TokenEntry): string {
  const groups = `"${e.user.groups.join(',').replace(/"/g, '""')}"`;
  return `${quote(e.token)},${quote(e.user.name)},${quote(e.user.uid ?? '')},${groups}\n`;
}
