// Printers of apps, batch, discovery, coordination, networking and rbac kinds.

import type { KubeObject } from '../../client/types.js';
import { formatLabelSelector } from '../../api/selectors.js';
import type { LabelSelector } from '../../api/types.js';
import { age, humanDuration } from './duration.js';
import type { Printer } from './types.js';
import { AGE_COL, NAME_COL, NONE, arr, col, get, num, str } from './types.js';
import { selectorMap } from './core-printers.js';

const CONTAINERS = col('Containers', 1, 'Names of each container in the template.');
const IMAGES = col('Images', 1, 'Images referenced by each container in the template.');
const SELECTOR = col('Selector', 1, 'Label selector for pods. Existing ReplicaSets whose pods ' +
  'are selected by this will be the ones affected by this deployment.');

function templateInfo(o: KubeObject): [string, string, string] {
  const cs = arr(get(o, 'spec', 'template', 'spec', 'containers'));
  const sel = get(o, 'spec', 'selector') as LabelSelector | undefined;
  return [cs.map((c) => String(c.name)).join(','), cs.map((c) => String(c.image)).join(','),
    sel ? formatLabelSelector(sel) || NONE : NONE];
}

export const deploymentPrinter: Printer = {
  columns: [NAME_COL, col('Ready', 0, 'Number of the pod with ready state'),
    col('Up-to-date', 0, 'Total number of non-terminated pods targeted by this deployment that ' +
      'have the desired template spec.', 'integer'),
    col('Available', 0, 'Total number of available pods (ready for at least minReadySeconds) ' +
      'targeted by this deployment.', 'integer'), AGE_COL, CONTAINERS, IMAGES, SELECTOR],
  row: (d, now) => [d.metadata.name ?? '',
    `${num(get(d, 'status', 'readyReplicas'))}/${num(get(d, 'spec', 'replicas'))}`,
    num(get(d, 'status', 'updatedReplicas')), num(get(d, 'status', 'availableReplicas')),
    age(d.metadata.creationTimestamp, now), ...templateInfo(d)],
};

export const replicaSetPrinter: Printer = {
  columns: [NAME_COL, col('Desired', 0, 'Number of desired pods.', 'integer'),
    col('Current', 0, 'Number of actual replicas.', 'integer'),
    col('Ready', 0, 'The number of ready replicas for this replica set.', 'integer'), AGE_COL,
    CONTAINERS, IMAGES, SELECTOR],
  row: (r, now) => [r.metadata.name ?? '', num(get(r, 'spec', 'replicas')),
    num(get(r, 'status', 'replicas')), num(get(r, 'status', 'readyReplicas')),
    age(r.metadata.creationTimestamp, now), ...templateInfo(r)],
};

export const daemonSetPrinter: Printer = {
  columns: [NAME_COL, col('Desired', 0, 'The desired number of nodes.', 'integer'),
    col('Current', 0, 'The number of nodes running the daemon pod.', 'integer'),
    col('Ready', 0, 'The number of ready nodes.', 'integer'),
    col('Up-to-date', 0, 'The number of nodes running the updated daemon pod.', 'integer'),
    col('Available', 0, 'The number of nodes with an available daemon pod.', 'integer'),
    col('Node Selector', 0, 'The node selector of the daemon set.'), AGE_COL,
    CONTAINERS, IMAGES, SELECTOR],
  row: (d, now) => [d.metadata.name ?? '', num(get(d, 'status', 'desiredNumberScheduled')),
    num(get(d, 'status', 'currentNumberScheduled')), num(get(d, 'status', 'numberReady')),
    num(get(d, 'status', 'updatedNumberScheduled')), num(get(d, 'status', 'numberAvailable')),
    selectorMap(get(d, 'spec', 'template', 'spec', 'nodeSelector')),
    age(d.metadata.creationTimestamp, now), ...templateInfo(d)],
};

function jobStatus(j: KubeObject): string {
  const conds = arr(get(j, 'status', 'conditions'));
  const has = (t: string) => conds.some((c) => c.type === t && c.status === 'True');
  if (has('Complete')) return 'Complete';
  if (has('Failed')) return 'Failed';
  if (j.metadata.deletionTimestamp) return 'Terminating';
  if (has('Suspended')) return 'Suspended';
  return 'Running';
}

export const jobPrinter: Printer = {
  columns: [NAME_COL, col('Status', 0, 'Status of the job.'),
    col('Completions', 0, 'The desired number of successfully finished pods the job should be ' +
      'run with.'), col('Duration', 0, 'Time required to complete the job.'), AGE_COL,
    CONTAINERS, IMAGES, SELECTOR],
  row: (j, now) => {
    const start = str(get(j, 'status', 'startTime'), '');
    const done = str(get(j, 'status', 'completionTime'), '');
    const dur = !start ? '' : age(start, done ? new Date(done) : now);
    const comp = get(j, 'spec', 'completions');
    return [j.metadata.name ?? '', jobStatus(j),
      `${num(get(j, 'status', 'succeeded'))}/${comp === undefined ? 1 : num(comp)}`, dur,
      age(j.metadata.creationTimestamp, now), ...templateInfo(j)];
  },
};

export const endpointSlicePrinter: Printer = {
  columns: [NAME_COL, col('AddressType', 0, 'The IP protocol for this slice'),
    col('Ports', 0, 'Enumerated ports on the slice'),
    col('Endpoints', 0, 'Endpoints on the slice'), AGE_COL],
  row: (e, now) => {
    const ports = arr(e.ports).map((p) => String(num(p.port)));
    const addrs = arr(e.endpoints).flatMap((x) => arr<string>(x.addresses));
    const eps = addrs.length ? addrs.slice(0, 3).join(',') +
      (addrs.length > 3 ? ` + ${addrs.length - 3} more...` : '') : '<unset>';
    return [e.metadata.name ?? '', str(e.addressType, ''),
      ports.length ? ports.join(',') : '<unset>', eps, age(e.metadata.creationTimestamp, now)];
  },
};

export const leasePrinter: Printer = {
  columns: [NAME_COL, col('Holder', 0, 'The holder of the lease'), AGE_COL],
  row: (l, now) => [l.metadata.name ?? '', str(get(l, 'spec', 'holderIdentity'), ''),
    age(l.metadata.creationTimestamp, now)],
};

export const serviceCidrPrinter: Printer = {
  columns: [NAME_COL, col('CIDRs', 0, 'Network ranges of the ServiceCIDR.'), AGE_COL],
  row: (s, now) => [s.metadata.name ?? '', arr<string>(get(s, 'spec', 'cidrs')).join(','),
    age(s.metadata.creationTimestamp, now)],
};

export const rolePrinter: Printer = {
  columns: [NAME_COL, col('Created At', 0, 'Time when the role was created.', 'string', 'date')],
  row: (r) => [r.metadata.name ?? '', r.metadata.creationTimestamp ?? ''],
};

function subjects(b: KubeObject, kind: string): string {
  const s = arr(b.subjects).filter((x) => x.kind === kind)
    .map((x) => (kind === 'ServiceAccount' ? `${String(x.namespace ?? '')}/${String(x.name)}` :
      String(x.name)));
  return s.join(', ');
}

export const bindingPrinter: Printer = {
  columns: [NAME_COL, col('Role', 0, 'Role of the binding'), AGE_COL,
    col('Users', 1, 'Users in the binding'), col('Groups', 1, 'Groups in the binding'),
    col('ServiceAccounts', 1, 'ServiceAccounts in the binding')],
  row: (b, now) => [b.metadata.name ?? '',
    `${str(get(b, 'roleRef', 'kind'), '')}/${str(get(b, 'roleRef', 'name'), '')}`,
    age(b.metadata.creationTimestamp, now), subjects(b, 'User'), subjects(b, 'Group'),
    subjects(b, 'ServiceAccount')],
};

/** upstream extractCSRStatus: Denied/Approved/Pending, then ",Failed", ",Issued". */
function csrCondition(o: KubeObject): string {
  const types = arr<{ type?: string }>(get(o, 'status', 'conditions')).map((c) => c.type);
  let s = types.includes('Denied') ? 'Denied' : types.includes('Approved') ? 'Approved' : 'Pending';
  if (types.includes('Failed')) s += ',Failed';
  if (str(get(o, 'status', 'certificate'), '') !== '') s += ',Issued';
  return s;
}

export const csrPrinter: Printer = {
  columns: [NAME_COL, AGE_COL,
    col('SignerName', 0, 'signerName indicates the requested signer, and is a qualified name.'),
    col('Requestor', 0, 'request contains an x509 certificate signing request encoded in a ' +
      '"CERTIFICATE REQUEST" PEM block.'),
    col('RequestedDuration', 0, 'expirationSeconds is the requested duration of validity of ' +
      'the issued certificate.'),
    col('Condition', 0, 'conditions applied to the request. Known conditions are "Approved", ' +
      '"Denied", and "Failed".')],
  row: (c, now) => {
    const exp = get(c, 'spec', 'expirationSeconds');
    return [c.metadata.name ?? '', age(c.metadata.creationTimestamp, now),
      str(get(c, 'spec', 'signerName'), '') || NONE, str(get(c, 'spec', 'username'), ''),
      typeof exp === 'number' ? humanDuration(exp * 1000) : NONE, csrCondition(c)];
  },
};
