// Which transport protocols the running kernel offers: /proc/net/protocols lists one registered
// protocol per line (SCTP appears only when the sctp module is built in or loaded; a container's
// kernel may have none). Read once per process: modules are not loaded behind kdp's back.

import { readFileSync } from 'node:fs';

let cached: ReadonlySet<string> | undefined;

/** Protocol names (`TCP`, `UDP`, `SCTP`, ...) as the kernel registers them. */
export function kernelProtocols(read: () => string = () => readFileSync('/proc/net/protocols', 'utf8'))
  : ReadonlySet<string> {
  if (cached) return cached;
  let text = '';
  try { text = read(); } catch { /* no /proc: nothing known */ }
  const names = new Set(text.split('\n').slice(1).map((l) => l.split(/\s+/, 1)[0]!).filter(Boolean));
  cached = names;
  return names;
}
