// The `ServiceIPs` admission plugin: kdp's stand-in for the allocators upstream runs inside the
// Service REST storage. It allocates in `admit`, releases what an update dropped in `committed`,
// undoes its reservations in `aborted`, and releases a deleted Service's values once the object
// is gone. The bitmaps are rebuilt from the stored Services by `repair()` (run lazily before the
// first allocation, and whenever the API server calls it), keeping in-flight reservations.

import { carryAllocatedServiceValues } from '../../api/defaults.js';
import type { IPFamily } from '../../api/net.js';
import type { Service } from '../../api/types.js';
import type { AdmissionPlugin, AdmissionRequest } from '../pipeline-types.js';
import { IPRange } from './ip-range.js';
import { PortRange } from './port-range.js';
import type { Random } from './range-allocator.js';
import {
  allocateService, dropTypeDependentFields, heldBy, heldDifference, type Allocators, type Held,
} from './service-alloc.js';
import { getOrUndefined, type AdmissionSource } from './source.js';

export interface ServiceIPsOptions {
  /** One CIDR, or two of different families (primary first). */
  readonly serviceCIDRs: readonly string[];
  /** `30000-32767`. */
  readonly nodePortRange: string;
  readonly source: AdmissionSource;
  /** For tests: a deterministic source of [0, 1). */
  readonly random?: Random;
}

export interface ServiceAllocationPlugin extends AdmissionPlugin {
  /** Rebuilds the bitmaps from the stored Services (plus in-flight reservations). */
  repair(): Promise<void>;
  /** Counts of addresses (per family) and node ports in use. */
  usage(): { ips: Partial<Record<IPFamily, number>>; nodePorts: number };
}

interface Reservation {
  readonly taken: Held;
  releaseOnCommit?: Held;
  /** Released at commit only if the Service no longer exists (deletion with finalizers). */
  releaseIfGone?: { held: Held; namespace?: string; name: string };
}

const empty = (): Held => ({ ips: [], ports: [], conflicted: false });

export function buildServiceIPsPlugin(opts: ServiceIPsOptions): ServiceAllocationPlugin {
  const random = opts.random ?? Math.random;
  const ranges = new Map<IPFamily, IPRange>();
  for (const c of opts.serviceCIDRs) {
    const r = new IPRange(c, random);
    ranges.set(r.family, r);
  }
  const a: Allocators = { ranges, families: [...ranges.keys()],
    ports: new PortRange(opts.nodePortRange, random) };
  const reservations = new WeakMap<AdmissionRequest, Reservation>();
  const pending = new Set<Held>();
  let committedDuringRepair: Held[] | null = null;
  let repaired: Promise<void> | undefined;

  const release = (h: Held) => {
    for (const ip of h.ips) for (const r of ranges.values()) r.release(ip);
    for (const p of h.ports) a.ports.release(p);
  };

  async function repair(): Promise<void> {
    committedDuringRepair = [];
    try {
      const services = (await opts.source.list('services')) as Service[];
      const all = [...services.map(heldBy), ...pending, ...committedDuringRepair];
      const ips = all.flatMap((h) => h.ips);
      for (const r of ranges.values()) r.reset(ips);
      a.ports.reset(all.flatMap((h) => h.ports));
    } finally {
      committedDuringRepair = null;
    }
  }

  const ensureRepaired = () => (repaired ??= repair().catch((e: unknown) => {
    repaired = undefined;
    throw e;
  }));

  const isService = (req: AdmissionRequest) =>
    req.group === '' && req.resource === 'services' && !req.subresource;

  function admitWrite(req: AdmissionRequest, res: Reservation): void {
    const svc = req.object as Service;
    const old = req.oldObject as Service | undefined;
    if (old) {
      dropTypeDependentFields(svc, old);
      carryAllocatedServiceValues(svc, old);
    }
    allocateService(svc, old, a, res.taken);
    if (old) res.releaseOnCommit = heldDifference(heldBy(old), heldBy(svc));
    if (svc.metadata?.deletionTimestamp) {
      res.releaseIfGone = { held: heldBy(svc), namespace: svc.metadata.namespace,
        name: svc.metadata.name ?? '' };
    }
  }

  return {
    name: 'ServiceIPs',
    repair,
    usage: () => ({
      ips: Object.fromEntries([...ranges].map(([f, r]) => [f, r.used])),
      nodePorts: a.ports.used,
    }),
    async admit(req) {
      if (!isService(req)) return;
      await ensureRepaired();
      const res: Reservation = { taken: empty() };
      reservations.set(req, res);
      if (req.operation === 'DELETE' && req.oldObject) {
        res.releaseIfGone = { held: heldBy(req.oldObject as Service), namespace: req.namespace,
          name: req.name ?? '' };
        return;
      }
      if (!req.object) return;
      pending.add(res.taken);
      const before = structuredClone(req.object.spec);
      try {
        admitWrite(req, res);
      } catch (e) {
        if (!res.taken.conflicted) throw e;
        // The bitmap may be stale: rebuild it from storage and try once more.
        release(res.taken);
        Object.assign(res.taken, empty());
        req.object.spec = structuredClone(before);
        await repair();
        admitWrite(req, res);
      }
    },
    async committed(req) {
      const res = reservations.get(req);
      if (!res) return;
      reservations.delete(req);
      pending.delete(res.taken);
      committedDuringRepair?.push(res.taken);
      if (res.releaseOnCommit) release(res.releaseOnCommit);
      const g = res.releaseIfGone;
      if (g && !(await getOrUndefined(opts.source, 'services', g.namespace, g.name))) {
        release(g.held);
      }
    },
    async aborted(req) {
      const res = reservations.get(req);
      if (!res) return;
      reservations.delete(req);
      pending.delete(res.taken);
      release(res.taken);
    },
  };
}
