// The one-line answer of kdp's responders: `pod=<name> from=<ip>:<port>` (bin/kdp-echo.js, the
// kdp/echo workload) optionally followed by ` to=<ip>:<port>` (bin/kdp-probe.js; kdp-echo too
// once it reports its local address). IPv6 may come bare (`fd00::1:80`, split at the last
// colon) or bracketed (`[fd00::1]:80`); an HTTP response wrapping the line is accepted.

export interface ParsedReply {
  responder?: string;
  /** Normalised `ip:port` / `[v6]:port`. */
  seenSource?: string;
  servedBy?: string;
}

/** Normalises `ip:port`, `[v6]:port` or bare `v6:port` to `ip:port` / `[v6]:port`. */
export function normaliseHostPort(text: string): string | undefined {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text);
  let ip: string;
  let port: string;
  if (m) {
    ip = m[1]!;
    port = m[2]!;
  } else {
    const at = text.lastIndexOf(':');
    if (at <= 0 || !/^\d+$/.test(text.slice(at + 1))) return undefined;
    ip = text.slice(0, at);
    port = text.slice(at + 1);
  }
  ip = ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  return ip.includes(':') ? `[${ip.toLowerCase()}]:${port}` : `${ip}:${port}`;
}

export function parseReplyLine(text: string): ParsedReply {
  const line = text.split(/\r?\n/).find((l) => /\bpod=/.test(l)) ?? '';
  const out: ParsedReply = {};
  for (const field of line.trim().split(/\s+/)) {
    const eq = field.indexOf('=');
    if (eq < 0) continue;
    const key = field.slice(0, eq);
    const value = field.slice(eq + 1);
    if (key === 'pod') out.responder = value;
    const hp = key === 'from' || key === 'to' ? normaliseHostPort(value) : undefined;
    if (hp && key === 'from') out.seenSource = hp;
    if (hp && key === 'to') out.servedBy = hp;
  }
  return out;
}
