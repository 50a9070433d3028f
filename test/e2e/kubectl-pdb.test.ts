// PodDisruptionBudgets with the real kubectl against kdp's API server, the disruption controller
// and a virtual node: `kubectl create pdb` (1.27 JSON, 1.33 protobuf), `get pdb` columns, status
// counts for minAvailable and maxUnavailable, evictions spending the budget then refused with
// 429 and upstream's cause, `kubectl drain` blocked by a budget, two budgets on one pod a 500,
// and upstream's validation.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { buildHttpClient } from '../../src/client/http-client.js';
import type { Client, KubeObject } from '../../src/client/types.js';
import { buildControllerManager, type ControllerManager } from '../../src/controllers/manager.js';
import { buildNodeAgent, type NodeAgent } from '../../src/kubelet/node-agent.js';
import { buildVirtualRuntime } from '../../src/kubelet/runtime-virtual.js';
import { buildScheduler, type Scheduler } from '../../src/scheduler/scheduler.js';
import { kubectlMissing, startKubectlHarness, type KubectlHarness } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';

const PDBS = { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets', namespace: 'default' };
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' };

describe.skipIf(kubectlMissing(33) || kubectlMissing(27))('PodDisruptionBudgets', () => {
  let h: KubectlHarness;
  let client: Client;
  let manager: ControllerManager;
  let scheduler: Scheduler;
  let agent: NodeAgent;
  const k = (args: string[], minor = 33) => h.kubectl(args, { minor, timeoutMs: 60_000 });
  const pdb = (name: string) => client.get<KubeObject & { status?: any }>(PDBS, name);
  const evict = (name: string) => client.create({ ...PODS }, { apiVersion: 'policy/v1', kind: 'Eviction',
    metadata: { name, namespace: 'default' } } as KubeObject, { name, subresource: 'eviction' });
  const readyPods = async (app: string) => (await client.list<Pod>(PODS, { labelSelector: `app=${app}` })).items
    .filter((p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));

  beforeAll(async () => {
    h = await startKubectlHarness();
    client = buildHttpClient({ server: h.server.url, caPem: h.server.pki.caCertPem, token: h.server.pki.adminToken });
    manager = buildControllerManager({ client, options: { timeScale: 0.01 } });
    await manager.start();
    scheduler = buildScheduler({ client, options: { timeScale: 0.01, seed: 1 } });
    await scheduler.start();
    agent = buildNodeAgent({ client, nodeName: 'n1', runtime: buildVirtualRuntime({ timeScale: 0.01 }),
      options: { timeScale: 0.01, nodeIP: '172.18.0.2' } });
    await agent.start();
    for (const app of ['web', 'api']) {
      expect((await k(['create', 'deployment', app, '--image=kdp/echo', '--replicas=3'])).code).toBe(0);
      await waitFor(async () => (await readyPods(app)).length === 3 || undefined, 30_000, `${app} ready`);
    }
  });
  afterAll(async () => {
    await agent?.stop();
    scheduler?.stop();
    await manager?.stop();
    await h?.close();
  });

  it('kubectl create pdb (JSON and protobuf) and get pdb; the controller counts as upstream', async () => {
    expect((await k(['create', 'pdb', 'web-pdb', '--selector=app=web', '--min-available=2'], 27)).stdout)
      .toBe('poddisruptionbudget.policy/web-pdb created\n');
    expect((await k(['create', 'pdb', 'api-pdb', '--selector=app=api', '--max-unavailable=34%'])).stdout)
      .toBe('poddisruptionbudget.policy/api-pdb created\n');
    const web = await waitFor(async () => { const p = await pdb('web-pdb'); return p.status?.observedGeneration ? p : undefined; },
      10_000, 'web-pdb status');
    expect(web.status).toMatchObject({ currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, disruptionsAllowed: 1 });
    expect(web.status.conditions[0]).toMatchObject({ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods' });
    // maxUnavailable 34% of the Deployment's 3 replicas rounds up to 2: desired 1, allowed 2.
    const api = await waitFor(async () => { const p = await pdb('api-pdb'); return p.status?.observedGeneration ? p : undefined; },
      10_000, 'api-pdb status');
    expect(api.status).toMatchObject({ currentHealthy: 3, desiredHealthy: 1, expectedPods: 3, disruptionsAllowed: 2 });
    const out = (await k(['get', 'pdb'])).stdout;
    expect(out).toMatch(/^NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE\n/);
    expect(out).toMatch(/\nweb-pdb\s+2\s+N\/A\s+1\s+\S+\n/);
    expect(out).toMatch(/\napi-pdb\s+N\/A\s+34%\s+2\s+\S+\n/);
  });

  it('an eviction spends the budget; the next is 429 with the DisruptionBudget cause', async () => {
    const [a, b] = await readyPods('web');
    await evict(a!.metadata.name!);
    const after = await pdb('web-pdb');
    expect(after.status.disruptionsAllowed).toBe(0);
    expect(Object.keys(after.status.disruptedPods)).toEqual([a!.metadata.name]);
    const e = await evict(b!.metadata.name!).catch((x) => x);
    expect(e).toMatchObject({ code: 'KDP_TOO_MANY_REQUESTS',
      message: "Cannot evict pod as it would violate the pod's disruption budget." });
    expect(e.details.causes[0]).toMatchObject({ reason: 'DisruptionBudget' });
    expect(e.details.causes[0].message).toMatch(/^The disruption budget web-pdb needs 2 healthy pods and has \d currently$/);
    // The replacement becomes ready and the budget opens again.
    await waitFor(async () => (await pdb('web-pdb')).status?.disruptionsAllowed === 1 || undefined, 20_000, 'budget back');
  });

  it('kubectl drain waits on the budget and gives up at its timeout', async () => {
    expect((await k(['patch', 'pdb', 'web-pdb', '--type=merge', '-p', '{"spec":{"minAvailable":3}}'])).code).toBe(0);
    await waitFor(async () => (await pdb('web-pdb')).status?.disruptionsAllowed === 0 || undefined, 10_000, 'closed');
    const r = await k(['drain', 'n1', '--ignore-daemonsets', '--timeout=4s', '--pod-selector=app=web']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("Cannot evict pod as it would violate the pod's disruption budget.");
    expect((await readyPods('web')).length).toBe(3);
    await k(['uncordon', 'n1']);
  });

  it('two budgets on one pod: 500 as upstream; invalid budgets: 422 with upstream\'s causes', async () => {
    await k(['create', 'pdb', 'web-pdb2', '--selector=app=web', '--min-available=1']);
    const [a] = await readyPods('web');
    await expect(evict(a!.metadata.name!)).rejects.toMatchObject({ code: 'KDP_INTERNAL',
      message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.' });
    const both = await h.file('both.yaml', 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: both}\n' +
      'spec: {minAvailable: 1, maxUnavailable: "120%", selector: {matchLabels: {app: web}}}\n');
    const r = await k(['apply', '-f', both]);
    expect(r.stderr).toContain('minAvailable and maxUnavailable cannot be both set');
    expect(r.stderr).toContain('spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%');
  });
});
