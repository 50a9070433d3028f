// The runtime endpoint's CRI view, from sandbox records alone: container runs listed as a CRI
// runtime holds them (the previous run exited under its own ID), ID prefixes resolved or refused
// by name, images named as registries name them.

import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/api/types.js';
import type { RuntimeSandboxRecord } from '../../../src/kubelet/runtime.js';
import { containerEntries, listContainers, listImages, listPodSandbox, resolveId } from '../../../src/kubelet/runtime-endpoint/cri-view.js';
import { containerId, containerIdUrl, normalizeImageRef, sandboxId } from '../../../src/kubelet/runtime-endpoint/ids.js';

const pod = (name: string, uid: string): Pod => ({ apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: 'default', uid }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });

function record(name: string, uid: string, ready = true): RuntimeSandboxRecord {
  return { pod: pod(name, uid), createdAtMs: 1_700_000_000_000, ready, status: { uid, podIPs: ['10.244.0.5'],
    containers: [{ name: 'c', state: 'running', ready: true, restartCount: 2, startedAt: '2026-01-01T00:00:10Z',
      containerID: containerIdUrl(uid, 'c', 2),
      lastTerminated: { exitCode: 1, reason: 'Error', startedAt: '2026-01-01T00:00:05Z', finishedAt: '2026-01-01T00:00:06Z',
        containerID: containerIdUrl(uid, 'c', 1) } }] } };
}

describe('CRI view of the runtime', () => {
  it('a restarted container is its running run plus the previous run, exited, each under its own ID', () => {
    const cs = listContainers([record('a', 'u1')]);
    expect(cs.map((c) => [c.id, c.state, c.metadata.attempt])).toEqual([
      [containerId('u1', 'c', 2), 'CONTAINER_RUNNING', 2], [containerId('u1', 'c', 1), 'CONTAINER_EXITED', 1]]);
    expect(listContainers([record('a', 'u1')], { state: 'CONTAINER_RUNNING' })).toHaveLength(1);
    expect(containerEntries([record('a', 'u1')])[1]).toMatchObject({ previous: true, exitCode: 1, reason: 'Error' });
  });

  it('a container waiting for its first start has no runtime container yet', () => {
    const r = record('a', 'u1');
    const waiting = { ...r, status: { ...r.status, containers: [{ name: 'c', state: 'waiting' as const, ready: false,
      restartCount: 0, reason: 'ContainerCreating' }] } };
    expect(listContainers([waiting])).toEqual([]);
  });

  it('sandboxes: removed ones are NOTREADY; the ID filter takes a prefix', () => {
    const all = listPodSandbox([record('a', 'u1'), record('b', 'u2', false)]);
    expect(all.map((p) => [p.metadata.name, p.state])).toEqual([['a', 'SANDBOX_READY'], ['b', 'SANDBOX_NOTREADY']]);
    expect(listPodSandbox([record('a', 'u1'), record('b', 'u2')], { id: sandboxId('u2').slice(0, 5) })
      .map((p) => p.metadata.name)).toEqual(['b']);
    expect(all[0]!.createdAt).toBe('1700000000000000000');
  });

  it('an ID prefix resolves to one item, or is refused naming the node: unknown, ambiguous, not hex', () => {
    const items = ['abc123', 'abd456', 'ff0000'];
    expect(resolveId(items, (x) => x, 'abc', 'container', 'n1')).toBe('abc123');
    expect(() => resolveId(items, (x) => x, 'ab', 'container', 'n1'))
      .toThrow('node n1: container ID prefix "ab" is ambiguous (abc123, abd456)');
    expect(() => resolveId(items, (x) => x, '0', 'container', 'n1')).toThrow('node n1: no container with ID "0"');
    expect(() => resolveId(items, (x) => x, 'zz', 'pod sandbox', 'n1')).toThrow('expected hexadecimal');
  });

  it('images: one per reference, named as Docker names them', () => {
    expect(normalizeImageRef('busybox')).toBe('docker.io/library/busybox:latest');
    expect(normalizeImageRef('kdp/echo')).toBe('docker.io/kdp/echo:latest');
    expect(normalizeImageRef('registry.k8s.io/pause:3.10')).toBe('registry.k8s.io/pause:3.10');
    expect(normalizeImageRef('localhost:5000/app')).toBe('localhost:5000/app:latest');
    expect(listImages([record('a', 'u1'), record('b', 'u2')]).map((i) => i.repoTags))
      .toEqual([['docker.io/library/busybox:latest']]);
  });
});
