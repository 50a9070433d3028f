// A stub resolver over the record index, as a pod's resolver would ask the cluster DNS:
// `ndots:5` and the search list the kubelet writes for ClusterFirst
// (`<ns>.svc.<zone> svc.<zone> <zone>`), so `web`, `web.default` and
// `web.default.svc.cluster.local` all find the Service. For `kdp trace POD NAME`, `kdp verify`
// and `kdp dns lookup`; names outside the cluster are not resolved here (no network).

import type { Answer } from 'dns-packet';
import { answerQuestion, type AnswerOptions } from './answer.js';
import { normalizeName } from './names.js';
import { key, type DnsIndex, type DnsService } from './records.js';

export interface ResolveOptions {
  /** The asking pod's namespace (search list). */
  readonly namespace: string;
  readonly answer: AnswerOptions;
  /** Default 5 (the kubelet's `options ndots:5`). */
  readonly ndots?: number;
}

export interface Resolved {
  /** The name that answered, fully qualified, no trailing dot. */
  readonly fqdn: string;
  /** A and AAAA addresses, in answer order (CNAMEs inside the zone followed). */
  readonly ips: readonly string[];
  /** The Service the name is, when it is one (`<svc>.<ns>.svc.<zone>`). */
  readonly service?: DnsService;
}

/** The names tried for `name`, in order (glibc's: search list first when dots < ndots). */
export function searchNames(name: string, o: ResolveOptions): string[] {
  if (name.endsWith('.')) return [normalizeName(name)];
  const zone = o.answer.zone;
  const n = normalizeName(name);
  const search = [`${o.namespace}.svc.${zone}`, `svc.${zone}`, zone].map((s) => `${n}.${s}`);
  const dots = n.split('.').length - 1;
  return dots >= (o.ndots ?? 5) ? [n, ...search] : [...search, n];
}

function addresses(index: DnsIndex, name: string, o: AnswerOptions): string[] | undefined {
  const ips: string[] = [];
  let found = false;
  for (const type of ['A', 'AAAA'] as const) {
    const out = answerQuestion(index, { name, type }, o);
    if (out.kind !== 'answer' || out.rcode !== 'NOERROR') continue;
    found = true;
    for (const a of out.answers as Answer[]) {
      if ((a.type === 'A' || a.type === 'AAAA') && !ips.includes(a.data)) ips.push(a.data);
    }
  }
  return found && ips.length ? ips : undefined;
}

/** The first name of the search list with addresses, or undefined. */
export function resolveName(index: DnsIndex, name: string, o: ResolveOptions): Resolved | undefined {
  for (const fqdn of searchNames(name, o)) {
    const ips = addresses(index, fqdn, o.answer);
    if (!ips) continue;
    const m = new RegExp(`^([^.]+)\\.([^.]+)\\.svc\\.${o.answer.zone.replaceAll('.', '\\.')}$`).exec(fqdn);
    const service = m ? index.services.get(key(m[2]!, m[1]!)) : undefined;
    return { fqdn, ips, ...(service ? { service } : {}) };
  }
  return undefined;
}
