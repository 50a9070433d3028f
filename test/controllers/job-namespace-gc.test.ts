import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap, Job, Namespace, Pod, ReplicaSet } from '../../src/api/types.js';
import { isKdpError } from '../../src/errors.js';
import { listItems, ref, startTestCluster, waitFor, type TestCluster } from '../helpers/cluster.js';

const JOBS = ref('jobs', 'default', 'batch');
const PODS = ref('pods', 'default');
const RS = ref('replicasets', 'default', 'apps');
const CM = ref('configmaps', 'default');

const gone = async (p: Promise<unknown>) => {
  try { await p; return false; } catch (e) { return isKdpError(e, 'KDP_NOT_FOUND'); }
};

// The selector is given explicitly (manualSelector) so the test does not depend on the API
// server generating `batch.kubernetes.io/controller-uid` selectors.
function job(name: string, spec: object, annotations: Record<string, string> = {}) {
  return { apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { ...spec,
    manualSelector: true, selector: { matchLabels: { job: name } },
    template: { metadata: { annotations, labels: { job: name } }, spec: { restartPolicy: 'Never',
      containers: [{ name: 'work', image: 'busybox' }] } } } };
}

function rs(name: string, replicas = 1) {
  return { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name },
    spec: { replicas, selector: { matchLabels: { rs: name } },
      template: { metadata: { labels: { rs: name } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } };
}

describe('job, namespace and garbage collection controllers', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ timeScale: 0.01, nodes: ['n1', 'n2'],
      runtime: { completeAfterMs: 2000 } });
  });
  afterAll(async () => { await c?.close(); });

  it('a job runs `completions` pods at most `parallelism` at a time and completes', async () => {
    await c.client.create(JOBS, job('calc', { completions: 4, parallelism: 2 }));
    let maxActive = 0;
    const j = await waitFor(async () => {
      const x = await c.client.get<Job>(JOBS, 'calc');
      maxActive = Math.max(maxActive, x.status?.active ?? 0);
      return x.status?.conditions?.some((k) => k.type === 'Complete' && k.status === 'True') ? x : undefined;
    }, 30_000, 'job complete');
    expect(j.status?.succeeded).toBe(4);
    expect(maxActive).toBeLessThanOrEqual(2);
    expect(j.status?.conditions?.map((k) => [k.type, k.reason])).toEqual([
      ['SuccessCriteriaMet', 'CompletionsReached'], ['Complete', 'CompletionsReached']]);
    const pods = await listItems<Pod>(c.client, PODS, 'job=calc');
    expect(pods.filter((p) => p.status?.phase === 'Succeeded')).toHaveLength(4);
  });

  it('a job whose pods fail stops after backoffLimit with BackoffLimitExceeded', async () => {
    await c.client.create(JOBS, job('bad', { backoffLimit: 1 }, { 'kdp.io/virtual-exit-code': '1' }));
    const j = await waitFor(async () => {
      const x = await c.client.get<Job>(JOBS, 'bad');
      return x.status?.conditions?.some((k) => k.type === 'Failed') ? x : undefined;
    }, 30_000, 'job failed');
    expect(j.status?.failed).toBe(2);
    expect(j.status?.conditions?.find((k) => k.type === 'Failed')?.reason).toBe('BackoffLimitExceeded');
  });

  it('background deletion of a ReplicaSet garbage-collects its pods', async () => {
    await c.client.create(RS, rs('bg', 2));
    await waitFor(async () => (await listItems<Pod>(c.client, PODS, 'rs=bg')).length === 2);
    await c.client.delete(RS, 'bg', { propagationPolicy: 'Background' });
    await waitFor(async () => (await listItems<Pod>(c.client, PODS, 'rs=bg')).length === 0,
      30_000, 'pods collected');
  });

  it('orphan deletion keeps the pods and strips their ownerReferences', async () => {
    await c.client.create(RS, rs('orph', 1));
    await waitFor(async () => (await listItems<Pod>(c.client, PODS, 'rs=orph')).length === 1);
    await c.client.delete(RS, 'orph', { propagationPolicy: 'Orphan' });
    await waitFor(() => gone(c.client.get<ReplicaSet>(RS, 'orph')), 30_000, 'rs gone');
    const pods = await waitFor(async () => {
      const ps = await listItems<Pod>(c.client, PODS, 'rs=orph');
      return ps.length === 1 && !ps[0]!.metadata.ownerReferences?.length ? ps : undefined;
    }, 30_000, 'orphaned pod');
    expect(pods[0]!.metadata.deletionTimestamp).toBeUndefined();
  });

  it('foreground deletion removes dependents before the owner', async () => {
    const owner = await c.client.create<ConfigMap>(CM, { apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: 'fg-owner' } });
    await c.client.create(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fg-dep',
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'fg-owner',
        uid: owner.metadata.uid!, blockOwnerDeletion: true }] } });
    await c.client.delete(CM, 'fg-owner', { propagationPolicy: 'Foreground' });
    const seen: string[] = [];
    await waitFor(async () => {
      const depGone = await gone(c.client.get(CM, 'fg-dep'));
      const ownerGone = await gone(c.client.get(CM, 'fg-owner'));
      if (depGone && !seen.includes('dep')) seen.push('dep');
      if (ownerGone && !seen.includes('owner')) seen.push('owner');
      return depGone && ownerGone;
    }, 30_000, 'foreground deletion');
    expect(seen[0]).toBe('dep');
  });

  it('an object whose owner never existed is collected', async () => {
    await c.client.create(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dangling',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'nope', uid: 'no-such-uid' }] } });
    await waitFor(() => gone(c.client.get(CM, 'dangling')), 30_000, 'dangling collected');
  });

  it('deleting a namespace deletes its contents and then the namespace', async () => {
    const NS = ref('namespaces');
    await c.client.create(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tmp' } });
    await c.client.create(ref('configmaps', 'tmp'), { apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: 'x' } });
    await c.client.create(ref('replicasets', 'tmp', 'apps'), { ...rs('r', 1), metadata: { name: 'r' } });
    await c.client.delete(NS, 'tmp');
    await waitFor(() => gone(c.client.get<Namespace>(NS, 'tmp')), 30_000, 'namespace gone');
    expect(await gone(c.client.get(ref('configmaps', 'tmp'), 'x'))).toBe(true);
    expect(await gone(c.client.get(ref('replicasets', 'tmp', 'apps'), 'r'))).toBe(true);
    await waitFor(async () => (await listItems(c.client, ref('pods', 'tmp'))).length === 0);
  });
});
