// `kubectl drain` against kdp uses the Eviction API (pods/eviction), not plain deletes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlMissing, startKubectlHarness } from '../apiserver/helpers/kubectl.js';
import type { KubectlHarness } from '../apiserver/helpers/kubectl.js';

const skip = kubectlMissing(32);

const node = (name: string) => `apiVersion: v1
kind: Node
metadata: {name: ${name}}
status:
  conditions: [{type: Ready, status: "True"}]
  addresses: [{type: InternalIP, address: 172.18.0.2}]
`;

// Grace 0 in the pod spec: no kubelet runs here to confirm a graceful deletion.
const pod = (name: string, nodeName: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  nodeName: ${nodeName}
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: busybox:1.36}]
`;

describe.skipIf(skip)('kubectl drain evicts the pods of a node (kubectl 1.32 present)', () => {
  let h: KubectlHarness;
  beforeAll(async () => { h = await startKubectlHarness(); });
  afterAll(async () => { await h?.close(); });

  it('cordons the node, evicts its pods through pods/eviction and leaves other nodes', async () => {
    const docs = [node('n1'), node('n2'), pod('a', 'n1'), pod('b', 'n1'), pod('c', 'n2')];
    const f = await h.file('objs.yaml', docs.join('---\n'));
    const applied = await h.kubectl(['apply', '-f', f]);
    expect(applied.stderr).toBe('');
    const r = await h.kubectl(['drain', 'n1', '--ignore-daemonsets', '--force'],
      { timeoutMs: 60_000 });
    expect(r.stderr + r.stdout).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('node/n1 cordoned');
    expect(r.stderr + r.stdout).toMatch(/evicting pod default\/a/);
    expect(r.stdout).toMatch(/pod\/a evicted/);
    expect(r.stdout).toMatch(/pod\/b evicted/);
    expect(r.stdout).toContain('node/n1 drained');
    const left = await h.kubectl(['get', 'pods', '-o', 'name']);
    expect(left.stdout.trim()).toBe('pod/c');
    const n1 = await h.kubectl(['get', 'node', 'n1', '-o', 'jsonpath={.spec.unschedulable}']);
    expect(n1.stdout).toBe('true');
  });
});
