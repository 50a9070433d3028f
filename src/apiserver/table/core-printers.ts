// Printers of core/v1 kinds, after kubernetes pkg/printers/internalversion/printers.go.

import type { KubeObject } from '../../client/types.js';
import { formatLabelSelector } from '../../api/selectors.js';
import { age } from './duration.js';
import type { Printer } from './types.js';
import { AGE_COL, NAME_COL, NONE, arr, col, get, num, str } from './types.js';

/** Init containers with restartPolicy Always (sidecars, KEP-753). */
function sidecarNames(pod: KubeObject): Set<string> {
  return new Set(arr(get(pod, 'spec', 'initContainers')).filter((c) => c.restartPolicy === 'Always')
    .map((c) => str(c.name, '')));
}

function podReason(pod: KubeObject): { reason: string; ready: number; restarts: number } {
  let reason = str(get(pod, 'status', 'reason'), '') || str(get(pod, 'status', 'phase'), '');
  let ready = 0;
  let restarts = 0;
  let running = false;
  const inits = arr(get(pod, 'status', 'initContainerStatuses'));
  const sidecars = sidecarNames(pod);
  let sidecarRestarts = 0;
  let initializing = false;
  inits.forEach((c, i) => {
    restarts += num(c.restartCount);
    const sidecar = sidecars.has(str(c.name, ''));
    if (sidecar) sidecarRestarts += num(c.restartCount);
    const term = get(c, 'state', 'terminated') as Record<string, unknown> | undefined;
    const wait = get(c, 'state', 'waiting') as Record<string, unknown> | undefined;
    if (term && term.exitCode === 0) return;
    if (initializing) return;
    // A started sidecar counts as a container of the pod (READY), not as initializing.
    if (sidecar && c.started === true) {
      if (c.ready) ready++;
      return;
    }
    if (term) {
      reason = 'Init:' + (str(term.reason, '') || `ExitCode:${num(term.exitCode)}`);
      initializing = true;
    } else if (wait && wait.reason && wait.reason !== 'PodInitializing') {
      reason = `Init:${String(wait.reason)}`;
      initializing = true;
    } else if (!c.started) {
      reason = `Init:${i}/${arr(get(pod, 'spec', 'initContainers')).length}`;
      initializing = true;
    }
  });
  const initialized = arr(get(pod, 'status', 'conditions')).some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initialized) {
    restarts = sidecarRestarts;
    const cs = arr(get(pod, 'status', 'containerStatuses'));
    for (const c of [...cs].reverse()) {
      restarts += num(c.restartCount);
      const wait = get(c, 'state', 'waiting') as Record<string, unknown> | undefined;
      const term = get(c, 'state', 'terminated') as Record<string, unknown> | undefined;
      if (wait?.reason) reason = String(wait.reason);
      else if (term?.reason) reason = String(term.reason);
      else if (term) {
        reason = term.signal ? `Signal:${num(term.signal)}` : `ExitCode:${num(term.exitCode)}`;
      } else if (c.ready && get(c, 'state', 'running')) {
        running = true;
        ready++;
      }
    }
    if (reason === 'Completed' && running) reason = 'Running';
  }
  if (pod.metadata.deletionTimestamp) {
    reason = get(pod, 'status', 'reason') === 'NodeLost' ? 'Unknown' : 'Terminating';
  }
  return { reason, ready, restarts };
}

export const podPrinter: Printer = {
  columns: [NAME_COL,
    col('Ready', 0, 'The aggregate readiness state of this pod for accepting traffic.'),
    col('Status', 0, 'The aggregate status of the containers in this pod.'),
    col('Restarts', 0, 'The number of times the containers in this pod have been restarted and ' +
      'when the last container in this pod has restarted.'),
    AGE_COL,
    col('IP', 1, 'IP address allocated to the pod. Routable at least within the cluster.'),
    col('Node', 1, 'Name of the Node where this pod is running.'),
    col('Nominated Node', 1, 'Name of the node nominated by the scheduler to run this pod.'),
    col('Readiness Gates', 1, 'If specified, all readiness gates will be evaluated for pod ' +
      'readiness.')],
  row(p, now) {
    const { reason, ready, restarts } = podReason(p);
    // Sidecars count among the pod's containers (upstream printPod).
    const total = arr(get(p, 'spec', 'containers')).length + sidecarNames(p).size;
    const gates = arr(get(p, 'spec', 'readinessGates'));
    const conds = arr(get(p, 'status', 'conditions'));
    const gatesTrue = gates.filter((g) =>
      conds.some((c) => c.type === g.conditionType && c.status === 'True')).length;
    return [p.metadata.name ?? '', `${ready}/${total}`, reason, restarts,
      age(p.metadata.creationTimestamp, now), str(get(p, 'status', 'podIP')),
      str(get(p, 'spec', 'nodeName')), str(get(p, 'status', 'nominatedNodeName')),
      gates.length ? `${gatesTrue}/${gates.length}` : NONE];
  },
};

function selectorMap(m: unknown): string {
  const e = Object.entries((m ?? {}) as Record<string, string>)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return e.length ? e.map(([k, v]) => `${k}=${v}`).join(',') : NONE;
}

function serviceExternalIp(s: KubeObject): string {
  const type = str(get(s, 'spec', 'type'), 'ClusterIP');
  const ext = arr<string>(get(s, 'spec', 'externalIPs'));
  if (type === 'ExternalName') return str(get(s, 'spec', 'externalName'));
  if (type === 'LoadBalancer') {
    const ing = arr(get(s, 'status', 'loadBalancer', 'ingress'))
      .map((i) => String(i.ip ?? i.hostname ?? '')).filter(Boolean);
    const all = [...ing, ...ext];
    return all.length ? all.join(',') : '<pending>';
  }
  return ext.length ? ext.join(',') : NONE;
}

function servicePorts(s: KubeObject): string {
  const ps = arr(get(s, 'spec', 'ports'));
  if (!ps.length) return NONE;
  return ps.map((p) => (p.nodePort ? `${num(p.port)}:${num(p.nodePort)}/${str(p.protocol, 'TCP')}` :
    `${num(p.port)}/${str(p.protocol, 'TCP')}`)).join(',');
}

export const servicePrinter: Printer = {
  columns: [NAME_COL, col('Type', 0, 'The type of the service.'),
    col('Cluster-IP', 0, 'The cluster IP of the service.'),
    col('External-IP', 0, 'The external IP of the service.'),
    col('Port(s)', 0, 'The port(s) of service.'), AGE_COL,
    col('Selector', 1, 'Route service traffic to pods with label keys and values matching ' +
      'this selector.')],
  row: (s, now) => [s.metadata.name ?? '', str(get(s, 'spec', 'type'), 'ClusterIP'),
    str(get(s, 'spec', 'clusterIP')), serviceExternalIp(s), servicePorts(s),
    age(s.metadata.creationTimestamp, now), selectorMap(get(s, 'spec', 'selector'))],
};

function nodeStatus(n: KubeObject): string {
  const conds = arr(get(n, 'status', 'conditions'));
  const ready = conds.find((c) => c.type === 'Ready');
  const out = [!ready ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady'];
  if (get(n, 'spec', 'unschedulable')) out.push('SchedulingDisabled');
  return out.join(',');
}

function nodeRoles(n: KubeObject): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(n.metadata.labels ?? {})) {
    const prefix = 'node-role.kubernetes.io/';
    if (k.startsWith(prefix)) roles.add(k.slice(prefix.length));
    else if (k === 'kubernetes.io/role' && v) roles.add(v);
  }
  return roles.size ? [...roles].sort().join(',') : NONE;
}

function nodeAddress(n: KubeObject, type: string): string {
  const a = arr(get(n, 'status', 'addresses')).find((x) => x.type === type);
  return a ? String(a.address) : NONE;
}

export const nodePrinter: Printer = {
  columns: [NAME_COL, col('Status', 0, 'The status of the node'),
    col('Roles', 0, 'The roles of the node'), AGE_COL,
    col('Version', 0, 'Kubelet Version reported by the node.'),
    col('Internal-IP', 1, 'List of addresses reachable to the node. Queried from cloud provider, ' +
      'if available.'),
    col('External-IP', 1, 'List of addresses reachable to the node.'),
    col('OS-Image', 1, 'OS Image reported by the node from /etc/os-release (e.g. Debian ' +
      'GNU/Linux 7 (wheezy)).'),
    col('Kernel-Version', 1, 'Kernel Version reported by the node from \'uname -r\'.'),
    col('Container-Runtime', 1, 'ContainerRuntime Version reported by the node through runtime ' +
      'remote API (e.g. containerd://1.4.2).')],
  row: (n, now) => [n.metadata.name ?? '', nodeStatus(n), nodeRoles(n),
    age(n.metadata.creationTimestamp, now), str(get(n, 'status', 'nodeInfo', 'kubeletVersion'), ''),
    nodeAddress(n, 'InternalIP'), nodeAddress(n, 'ExternalIP'),
    str(get(n, 'status', 'nodeInfo', 'osImage'), '<unknown>'),
    str(get(n, 'status', 'nodeInfo', 'kernelVersion'), '<unknown>'),
    str(get(n, 'status', 'nodeInfo', 'containerRuntimeVersion'), '<unknown>')],
};

export const namespacePrinter: Printer = {
  columns: [NAME_COL, col('Status', 0, 'The status of the namespace'), AGE_COL],
  row: (n, now) => [n.metadata.name ?? '', str(get(n, 'status', 'phase'), ''),
    age(n.metadata.creationTimestamp, now)],
};

function endpointsList(e: KubeObject): string {
  const out: string[] = [];
  let count = 0;
  for (const s of arr(get(e, 'subsets'))) {
    const ports = arr(get(s, 'ports'));
    for (const a of arr(get(s, 'addresses'))) {
      if (!ports.length) { count++; if (out.length < 3) out.push(String(a.ip)); continue; }
      for (const p of ports) {
        count++;
        if (out.length < 3) out.push(`${String(a.ip)}:${num(p.port)}`);
      }
    }
  }
  if (!count) return NONE;
  return out.join(',') + (count > 3 ? ` + ${count - 3} more...` : '');
}

export const endpointsPrinter: Printer = {
  columns: [NAME_COL, col('Endpoints', 0, 'Endpoints of the service'), AGE_COL],
  row: (e, now) => [e.metadata.name ?? '', endpointsList(e),
    age(e.metadata.creationTimestamp, now)],
};

export const configMapPrinter: Printer = {
  columns: [NAME_COL, col('Data', 0, 'Data contains the configuration data.', 'integer'), AGE_COL],
  row: (c, now) => [c.metadata.name ?? '',
    Object.keys((c.data ?? {}) as object).length +
      Object.keys((c.binaryData ?? {}) as object).length,
    age(c.metadata.creationTimestamp, now)],
};

export const secretPrinter: Printer = {
  columns: [NAME_COL, col('Type', 0, 'The type of the secret'),
    col('Data', 0, 'The number of entries in data', 'integer'), AGE_COL],
  row: (s, now) => [s.metadata.name ?? '', str(s.type, 'Opaque'),
    Object.keys((s.data ?? {}) as object).length, age(s.metadata.creationTimestamp, now)],
};

export const serviceAccountPrinter: Printer = {
  columns: [NAME_COL, col('Secrets', 0, 'Secrets is the list of secrets allowed to be used by ' +
    'pods running using this ServiceAccount.', 'integer'), AGE_COL],
  row: (s, now) => [s.metadata.name ?? '', arr(s.secrets).length,
    age(s.metadata.creationTimestamp, now)],
};

function involved(e: KubeObject): string {
  const io = (e.involvedObject ?? e.regarding ?? {}) as Record<string, string>;
  return `${(io.kind ?? '').toLowerCase()}/${io.name ?? ''}`;
}

export const eventPrinter: Printer = {
  columns: [col('Last Seen', 0, 'The last time this event was seen.'),
    col('Type', 0, 'The type of this event.'), col('Reason', 0, 'The reason this event was ' +
      'generated.'), col('Object', 0, 'The object that this event is about.'),
    col('Subobject', 1, 'The subobject that this event is about.'),
    col('Source', 1, 'The component reporting this event.'),
    col('Message', 0, 'A human-readable description of the status of this operation.'),
    col('First Seen', 1, 'The first time this event was seen.'),
    col('Count', 1, 'The number of times this event has occurred.', 'integer'),
    { ...NAME_COL, priority: 1 }],
  row: (e, now) => {
    const last = str(e.lastTimestamp, '') || str(e.eventTime, '') ||
      e.metadata.creationTimestamp;
    const first = str(e.firstTimestamp, '') || str(e.eventTime, '') ||
      e.metadata.creationTimestamp;
    const src = str(get(e, 'source', 'component'), '') || str(e.reportingComponent, '');
    return [age(last, now), str(e.type, ''), str(e.reason, ''), involved(e),
      str(get(e, 'involvedObject', 'fieldPath'), ''), src, str(e.message, ''), age(first, now),
      num(e.count) || 1, e.metadata.name ?? ''];
  },
};

export { selectorMap, formatLabelSelector };
