// One text holding a whole ipvs-mode state (the `ipvs.golden` format): four sections, always in
// this order, each introduced by its header line, each the exact text of its own format:
//   ### ipvsadm -Sn          virtual and real servers
//   ### ipset save           every kube-proxy ipset, in upstream's list order
//   ### iptables-restore     the supplementary restore input, as upstream writes it
//   ### kube-ipvs0           addresses bound on the dummy device
// No section content may contain a line starting with `### `.

import { formatDummyAddresses, parseDummyAddresses } from './addresses.js';
import { formatIpsetSave, parseIpsetSave } from './ipset.js';
import { formatIpvsadm, parseIpvsadm } from './ipvsadm.js';
import { parseError, splitLines } from './parse-error.js';
import type { IpvsState } from './types.js';

export const SECTION_HEADERS = [
  '### ipvsadm -Sn', '### ipset save', '### iptables-restore', '### kube-ipvs0',
] as const;

export function formatIpvsState(state: IpvsState): string {
  const bodies = [
    formatIpvsadm(state.ipvs),
    formatIpsetSave(state.ipsets),
    state.iptables,
    formatDummyAddresses(state.dummyAddresses),
  ];
  return SECTION_HEADERS.map((h, i) => `${h}\n${bodies[i]}`).join('');
}

/** Split into the four section bodies; line numbers in errors are those of the whole text. */
export function splitIpvsState(text: string): { bodies: string[]; offsets: number[] } {
  const lines = splitLines(text);
  const bodies: string[][] = [];
  const offsets: number[] = [];
  lines.forEach((line, i) => {
    if (line.startsWith('### ')) {
      const expected = SECTION_HEADERS[bodies.length];
      if (line !== expected) {
        throw parseError('ipvs state', i + 1, line,
          `expected header ${JSON.stringify(expected ?? 'none')}`);
      }
      bodies.push([]);
      offsets.push(i + 1);
    } else if (bodies.length === 0) {
      throw parseError('ipvs state', i + 1, line,
        `expected header ${JSON.stringify(SECTION_HEADERS[0])}`);
    } else {
      bodies[bodies.length - 1]!.push(line);
    }
  });
  if (bodies.length !== SECTION_HEADERS.length) {
    throw parseError('ipvs state', lines.length, '',
      `missing header ${SECTION_HEADERS[bodies.length]}`);
  }
  return { bodies: bodies.map((b) => (b.length === 0 ? '' : `${b.join('\n')}\n`)), offsets };
}

/** Parse an `ipvs.golden`-format text. Errors carry the line number within the whole text. */
export function parseIpvsState(text: string): IpvsState {
  const { bodies, offsets } = splitIpvsState(text);
  return {
    ipvs: parseIpvsadm(bodies[0] ?? '', (offsets[0] ?? 0) + 1),
    ipsets: parseIpsetSave(bodies[1] ?? '', (offsets[1] ?? 0) + 1),
    iptables: bodies[2] ?? '',
    dummyAddresses: parseDummyAddresses(bodies[3] ?? '', (offsets[3] ?? 0) + 1),
  };
}

/**
 * A dual-stack compile prints one state per family, each after a `# IPv4` / `# IPv6` line;
 * single-stack output has no such line. Returns the per-family texts (family '' when none).
 */
export function splitFamilies(text: string): { family: '' | 'IPv4' | 'IPv6'; text: string }[] {
  const parts = text.split(/^# (IPv4|IPv6)\n/m);
  if (parts.length === 1) return [{ family: '', text }];
  const out: { family: 'IPv4' | 'IPv6'; text: string }[] = [];
  for (let i = 1; i < parts.length; i += 2) {
    out.push({ family: parts[i] as 'IPv4' | 'IPv6', text: parts[i + 1] ?? '' });
  }
  return out;
}
