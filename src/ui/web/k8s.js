// Reading Kubernetes objects the way kubectl shows them.

export const nsName = (o) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}`
  : o.metadata.name);

export const byName = (a, b) => (nsName(a) < nsName(b) ? -1 : nsName(a) > nsName(b) ? 1 : 0);

export function condition(o, type) {
  return o.status?.conditions?.find((c) => c.type === type)?.status;
}

export function podState(p) {
  if (p.metadata.deletionTimestamp) return 'Terminating';
  return p.status?.phase ?? 'Pending';
}

export const isPodReady = (p) => condition(p, 'Ready') === 'True';

export const nodeIPs = (n) => (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP')
  .map((a) => a.address);

export const podCIDRs = (n) => n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []);

export function nodeReady(n) {
  const s = condition(n, 'Ready');
  return s === 'True' ? 'Ready' : s === 'False' ? 'NotReady' : 'Unknown';
}

/** `ns/name` of each Service → its ready endpoints: pod keys and `ip` addresses. */
export function readyEndpoints(slices) {
  const out = new Map();
  for (const s of slices.values()) {
    const svc = s.metadata.labels?.['kubernetes.io/service-name'];
    if (!svc) continue;
    const key = `${s.metadata.namespace}/${svc}`;
    const list = out.get(key) ?? [];
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      const ref = e.targetRef?.kind === 'Pod' ? `${e.targetRef.namespace ?? s.metadata.namespace}/${e.targetRef.name}` : undefined;
      list.push({ pod: ref, addresses: e.addresses, node: e.nodeName });
    }
    out.set(key, list);
  }
  return out;
}

export function servicePorts(s) {
  return (s.spec?.ports ?? []).map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`);
}

export function lbAddresses(s) {
  return (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? i.hostname).filter(Boolean);
}

export function age(ts) {
  if (!ts) return '';
  const s = Math.max(0, Math.round((Date.now() - Date.parse(ts)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

export const clock = (ts) => (ts ? new Date(ts).toLocaleTimeString([], { hour12: false }) : '');
