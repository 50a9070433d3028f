// The Node object a kubelet registers and the status it keeps posting: capacity/allocatable,
// addresses (InternalIP, Hostname), the four standard conditions, nodeInfo and daemonEndpoints.

import type { Node, NodeCondition, Taint } from '../api/types.js';

export interface NodeShape {
  readonly nodeName: string;
  readonly nodeIP: string;
  /** Dual stack: both InternalIPs, primary first (default [nodeIP]). */
  readonly nodeIPs?: readonly string[];
  readonly cpu: string;
  readonly memory: string;
  readonly pods: number;
  readonly labels?: Record<string, string>;
  readonly taints?: Taint[];
  readonly kubeletVersion: string;
  readonly nodeInfo?: { readonly osImage: string; readonly kernelVersion: string };
  /** The kubelet API's port (status.daemonEndpoints); default 10250. */
  readonly kubeletPort?: number;
}

export function nodeConditions(now: string, prev: readonly NodeCondition[] = []): NodeCondition[] {
  const c = (type: string, status: 'True' | 'False', reason: string, message: string) => {
    const p = prev.find((x) => x.type === type);
    return {
      type, status, lastHeartbeatTime: now,
      lastTransitionTime: p?.status === status ? p.lastTransitionTime : now, reason, message,
    };
  };
  return [
    c('MemoryPressure', 'False', 'KubeletHasSufficientMemory',
      'kubelet has sufficient memory available'),
    c('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
    c('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
    c('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
  ];
}

export function buildNodeObject(s: NodeShape, now: string): Node {
  const resources = { cpu: s.cpu, memory: s.memory, pods: String(s.pods),
    'ephemeral-storage': '61202244Ki', 'hugepages-2Mi': '0' };
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: {
      name: s.nodeName,
      labels: {
        'beta.kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64', 'kubernetes.io/hostname': s.nodeName,
        'kubernetes.io/os': 'linux', ...(s.labels ?? {}),
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    },
    spec: { ...(s.taints?.length ? { taints: s.taints } : {}) },
    status: {
      capacity: resources,
      allocatable: { ...resources },
      conditions: nodeConditions(now),
      addresses: [...(s.nodeIPs ?? [s.nodeIP]).map((address) => ({ type: 'InternalIP' as const, address })),
        { type: 'Hostname', address: s.nodeName }],
      daemonEndpoints: { kubeletEndpoint: { Port: s.kubeletPort ?? 10250 } },
      nodeInfo: {
        machineID: '', systemUUID: '', bootID: '',
        kernelVersion: s.nodeInfo?.kernelVersion ?? '', osImage: s.nodeInfo?.osImage ?? 'kdp virtual node',
        containerRuntimeVersion: 'kdp://0.1.0', kubeletVersion: s.kubeletVersion,
        kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64',
      },
    },
  };
}
