// The (legacy) Endpoints controller: one core/v1 Endpoints per Service with a selector, named
// after it, with ready pods in `addresses` and the others in `notReadyAddresses`, subsets
// grouped by port set (upstream RepackSubsets); terminating pods are left out unless the
// Service publishes not-ready addresses.

import type {
  EndpointAddress, EndpointPort, Endpoints, EndpointSubset, Pod, Service,
} from '../../api/types.js';
import { parseIP } from '../../api/net.js';
import { LABEL_PAIR_INDEX, labelPairIndex, objectsMatchingMap } from '../label-index.js';
import { isKdpError } from '../../errors.js';
import type { ControllerContext } from '../options.js';
import { ENDPOINTS, inNs, PODS, SERVICES } from '../refs.js';
import { buildQueueController } from '../runner.js';
import { isPodReady, type Controller } from '../util.js';
import { findPort, podIPOfFamily, shouldPodBeInEndpoints, watchPodsForServices }
  from './exports.js';

export function endpointSubsets(svc: Service, pods: readonly Pod[]): EndpointSubset[] {
  const publish = !!svc.spec?.publishNotReadyAddresses;
  const groups = new Map<string, EndpointSubset>();
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, publish)) continue;
    const ip = podIPOfFamily(pod, svc.spec?.ipFamilies?.[0] ?? 'IPv4');
    if (!ip) continue;
    const addr: EndpointAddress = {
      ip, ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
      targetRef: {
        kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name,
        uid: pod.metadata.uid,
      },
    };
    if (pod.spec?.hostname && pod.spec.subdomain === svc.metadata.name) {
      addr.hostname = pod.spec.hostname;
    }
    const ports: EndpointPort[] = [];
    for (const sp of svc.spec?.ports ?? []) {
      const port = findPort(pod, sp);
      if (port === undefined) continue;
      ports.push({ ...(sp.name ? { name: sp.name } : {}), port, protocol: sp.protocol ?? 'TCP',
        ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) });
    }
    if ((svc.spec?.ports ?? []).length > 0 && ports.length === 0) continue;
    const key = JSON.stringify(ports);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ports }));
    const ready = publish || isPodReady(pod);
    const list = ready ? (g.addresses ??= []) : (g.notReadyAddresses ??= []);
    list.push(addr);
  }
  const keys = new Map<string, bigint>();
  const keyOf = (ip: string) => {
    let k = keys.get(ip);
    if (k === undefined) keys.set(ip, (k = parseIP(ip)?.value ?? 0n));
    return k;
  };
  const byIp = (a: EndpointAddress, b: EndpointAddress) => {
    const x = keyOf(a.ip);
    const y = keyOf(b.ip);
    return x < y ? -1 : x > y ? 1 : 0;
  };
  return [...groups.values()].map((s) => {
    s.addresses?.sort(byIp);
    s.notReadyAddresses?.sort(byIp);
    if (s.ports?.length === 0) delete s.ports;
    return s;
  });
}

export function buildEndpointsController(ctx: ControllerContext): Controller {
  const { client, options } = ctx;
  const svcInf = ctx.informers.informerFor<Service>(SERVICES);
  const podInf = ctx.informers.informerFor<Pod>(PODS,
    { indexers: { [LABEL_PAIR_INDEX]: labelPairIndex } });
  const epInf = ctx.informers.informerFor<Endpoints>(ENDPOINTS);
  const c = buildQueueController('endpoints', options.workers, sync);
  watchPodsForServices(ctx.informers,
    (k) => c.queue.addAfter(k, options.endpointUpdatesBatchPeriodMs));

  async function sync(key: string): Promise<void> {
    const svc = svcInf.cache.get(key);
    if (!svc) {
      const gone = epInf.cache.get(key);
      if (gone) {
        await client.delete(inNs(ENDPOINTS, gone.metadata.namespace), gone.metadata.name!)
          .catch((e) => { if (!isKdpError(e, 'KDP_NOT_FOUND')) throw e; });
      }
      return;
    }
    if (!svc.spec?.selector || Object.keys(svc.spec.selector).length === 0) return;
    const pods = objectsMatchingMap(podInf.cache, svc.metadata.namespace ?? '', svc.spec.selector);
    const subsets = endpointSubsets(svc, pods);
    const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}) };
    if (svc.spec.clusterIP === 'None') labels['service.kubernetes.io/headless'] = '';
    const cur = epInf.cache.get(key);
    const ref = inNs(ENDPOINTS, svc.metadata.namespace);
    try {
      if (!cur) {
        await client.create(ref, {
          apiVersion: 'v1', kind: 'Endpoints',
          metadata: { name: svc.metadata.name, namespace: svc.metadata.namespace, labels },
          subsets,
        });
      } else if (JSON.stringify(cur.subsets ?? []) !== JSON.stringify(subsets)
        || JSON.stringify(cur.metadata.labels ?? {}) !== JSON.stringify(labels)) {
        await client.update(ref, { ...cur, metadata: { ...cur.metadata, labels }, subsets });
      }
    } catch (e) {
      if (isKdpError(e, 'KDP_ALREADY_EXISTS') || isKdpError(e, 'KDP_CONFLICT')) {
        c.queue.addAfter(key, 20);
        return;
      }
      throw e;
    }
  }

  return { name: 'endpoints', start: c.start, stop: c.stop };
}
