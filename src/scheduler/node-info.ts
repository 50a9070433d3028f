// The scheduler's per-node view: allocatable resources, what bound (and assumed) pods request,
// and the host ports in use. Updated incrementally from pod and node events.

import type { Node, Pod } from '../api/types.js';
import { milliCPU, quantityValue } from './quantity.js';

export interface PodResources {
  milliCPU: number;
  memory: number;
  /** With upstream's defaults for containers that request nothing (100m CPU, 200 MiB). */
  nonZeroCPU: number;
  nonZeroMemory: number;
}

export interface HostPort {
  readonly protocol: string;
  readonly hostIP: string;
  readonly port: number;
}

export interface NodeInfo {
  node: Node;
  allocCPU: number;
  allocMemory: number;
  allocPods: number;
  requested: PodResources;
  /** pod key → what it contributes */
  pods: Map<string, { res: PodResources; ports: HostPort[] }>;
  usedPorts: HostPort[];
}

const DEFAULT_MILLI_CPU = 100;
const DEFAULT_MEMORY = 200 * 1024 * 1024;

export function podResources(pod: Pod): PodResources {
  const spec = pod.spec;
  const r: PodResources = { milliCPU: 0, memory: 0, nonZeroCPU: 0, nonZeroMemory: 0 };
  for (const c of spec?.containers ?? []) {
    const cpu = milliCPU(c.resources?.requests?.cpu);
    const mem = quantityValue(c.resources?.requests?.memory);
    r.milliCPU += cpu;
    r.memory += mem;
    r.nonZeroCPU += c.resources?.requests?.cpu === undefined ? DEFAULT_MILLI_CPU : cpu;
    r.nonZeroMemory += c.resources?.requests?.memory === undefined ? DEFAULT_MEMORY : mem;
  }
  // Init containers run one at a time before the others: the pod needs the larger of the two.
  for (const c of spec?.initContainers ?? []) {
    r.milliCPU = Math.max(r.milliCPU, milliCPU(c.resources?.requests?.cpu));
    r.memory = Math.max(r.memory, quantityValue(c.resources?.requests?.memory));
  }
  const oh = spec?.overhead;
  if (oh) {
    r.milliCPU += milliCPU(oh.cpu);
    r.memory += quantityValue(oh.memory);
  }
  return r;
}

export function podHostPorts(pod: Pod): HostPort[] {
  const out: HostPort[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      out.push({ protocol: p.protocol ?? 'TCP', hostIP: p.hostIP || '0.0.0.0', port: p.hostPort });
    }
  }
  return out;
}

export function portsConflict(a: HostPort, b: HostPort): boolean {
  return a.port === b.port && a.protocol === b.protocol
    && (a.hostIP === b.hostIP || a.hostIP === '0.0.0.0' || b.hostIP === '0.0.0.0');
}

export function buildNodeInfo(node: Node): NodeInfo {
  const alloc = node.status?.allocatable ?? node.status?.capacity ?? {};
  return {
    node,
    allocCPU: milliCPU(alloc.cpu),
    allocMemory: quantityValue(alloc.memory),
    allocPods: alloc.pods === undefined ? 110 : quantityValue(alloc.pods),
    requested: { milliCPU: 0, memory: 0, nonZeroCPU: 0, nonZeroMemory: 0 },
    pods: new Map(),
    usedPorts: [],
  };
}

export function setNode(info: NodeInfo, node: Node): void {
  const fresh = buildNodeInfo(node);
  info.node = node;
  info.allocCPU = fresh.allocCPU;
  info.allocMemory = fresh.allocMemory;
  info.allocPods = fresh.allocPods;
}

export function addPodToNode(info: NodeInfo, key: string, pod: Pod): void {
  if (info.pods.has(key)) removePodFromNode(info, key);
  const res = podResources(pod);
  const ports = podHostPorts(pod);
  info.pods.set(key, { res, ports });
  adjust(info.requested, res, 1);
  info.usedPorts.push(...ports);
}

export function removePodFromNode(info: NodeInfo, key: string): void {
  const e = info.pods.get(key);
  if (!e) return;
  info.pods.delete(key);
  adjust(info.requested, e.res, -1);
  if (e.ports.length) info.usedPorts = info.usedPorts.filter((p) => !e.ports.includes(p));
}

function adjust(into: PodResources, by: PodResources, sign: 1 | -1): void {
  into.milliCPU += sign * by.milliCPU;
  into.memory += sign * by.memory;
  into.nonZeroCPU += sign * by.nonZeroCPU;
  into.nonZeroMemory += sign * by.nonZeroMemory;
}
