// The real kubectl (1.27 and 1.33) against kdp's StatefulSet and CronJob: `create cronjob`
// (a protobuf body from 1.33), `create job --from=cronjob/x`, `get sts,cronjob` columns,
// `scale sts`, `rollout status sts` — with the controllers, scheduler and a virtual node running
// over HTTPS beside the API server.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHttpClient } from '../../src/client/http-client.js';
import type { Job, Pod } from '../../src/api/types.js';
import { buildControllerManager, type ControllerManager } from '../../src/controllers/manager.js';
import { buildNodeAgent, type NodeAgent } from '../../src/kubelet/node-agent.js';
import { buildVirtualRuntime } from '../../src/kubelet/runtime-virtual.js';
import { buildScheduler, type Scheduler } from '../../src/scheduler/scheduler.js';
import { kubectlMissing, startKubectlHarness, type KubectlHarness } from '../apiserver/helpers/kubectl.js';
import { listItems, ref, waitFor } from '../helpers/cluster.js';

const MINORS = [27, 33].filter((m) => !kubectlMissing(m));

const sts = (name: string) => `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ${name}, namespace: default}
spec:
  replicas: 3
  serviceName: ${name}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers: [{name: nginx, image: nginx:1.27}]
`;

describe.skipIf(MINORS.length === 0).each(MINORS)('kubectl 1.%i with StatefulSet and CronJob', (minor) => {
  let h: KubectlHarness;
  let manager: ControllerManager;
  let scheduler: Scheduler;
  let agent: NodeAgent;
  const k = (args: string[]) => h.kubectl(args, { minor, timeoutMs: 60_000 });

  beforeAll(async () => {
    h = await startKubectlHarness();
    const client = buildHttpClient({ server: h.server.url, caPem: h.server.pki.caCertPem,
      token: h.server.pki.adminToken });
    manager = buildControllerManager({ client, options: { timeScale: 0.01 } });
    await manager.start();
    scheduler = buildScheduler({ client, options: { timeScale: 0.01, seed: 1 } });
    await scheduler.start();
    agent = buildNodeAgent({ client, nodeName: 'n1', runtime: buildVirtualRuntime({ timeScale: 0.01 }),
      options: { timeScale: 0.01, nodeIP: '172.18.0.2' } });
    await agent.start();
  });
  afterAll(async () => {
    await agent?.stop();
    scheduler?.stop();
    await manager?.stop();
    await h?.close();
  });

  const client = () => buildHttpClient({ server: h.server.url, caPem: h.server.pki.caCertPem,
    token: h.server.pki.adminToken });

  it('apply, rollout status, get and scale a StatefulSet', async () => {
    const f = await h.file('web.yaml', sts('web'));
    const a = await k(['apply', '-f', f]);
    expect(a.stderr).toBe('');
    expect(a.stdout).toContain('statefulset.apps/web created');
    const r = await k(['rollout', 'status', 'sts/web', '--timeout=60s']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // Defaulted rollingUpdate.partition 0: kubectl reports a partitioned roll-out, as on upstream.
    expect(r.stdout).toContain('partitioned roll out complete: 3 new pods have been updated...');
    const g = await k(['get', 'sts,cronjob', '-o', 'wide']);
    expect(g.stdout).toMatch(/^NAME\s+READY\s+AGE\s+CONTAINERS\s+IMAGES\n/);
    expect(g.stdout).toMatch(/statefulset\.apps\/web\s+3\/3\s+\S+\s+nginx\s+nginx:1\.27/);
    const pods = await k(['get', 'pods', '-o', 'name']);
    expect(pods.stdout.trim().split('\n')).toEqual(['pod/web-0', 'pod/web-1', 'pod/web-2']);
    const s = await k(['scale', 'sts', 'web', '--replicas=1']);
    expect(s.stdout).toContain('statefulset.apps/web scaled');
    await waitFor(async () => (await listItems<Pod>(client(), ref('pods', 'default'), 'app=web'))
      .filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name).join() === 'web-0', 30_000, 'web-0 only');
    const r2 = await k(['rollout', 'status', 'sts/web', '--timeout=60s']);
    expect(r2.code).toBe(0);
  });

  it('set image, rollout history and rollout undo of a StatefulSet', async () => {
    const si = await k(['set', 'image', 'sts/web', 'nginx=nginx:1.28']);
    expect(si.stdout).toContain('statefulset.apps/web image updated');
    expect((await k(['rollout', 'status', 'sts/web', '--timeout=60s'])).code).toBe(0);
    const hist = await k(['rollout', 'history', 'sts/web']);
    expect(hist.stderr).toBe('');
    expect(hist.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
    const r1 = await k(['rollout', 'history', 'sts/web', '--revision=1']);
    expect(r1.stdout).toContain('nginx:1.27');
    const u = await k(['rollout', 'undo', 'sts/web']);
    expect(u.stderr).toBe('');
    expect(u.stdout).toContain('statefulset.apps/web rolled back');
    await waitFor(async () => {
      const ps = (await listItems<Pod>(client(), ref('pods', 'default'), 'app=web')).filter((p) => !p.metadata.deletionTimestamp);
      return ps.length === 1 && ps[0]!.spec?.containers[0]?.image === 'nginx:1.27' && ps[0]!.status?.phase === 'Running';
    }, 30_000, 'web-0 back at nginx:1.27');
    const h2 = await k(['rollout', 'history', 'sts/web']);
    expect(h2.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>/);
    const revs = await k(['get', 'controllerrevisions']);
    expect(revs.stdout).toMatch(/^NAME\s+CONTROLLER\s+REVISION\s+AGE\n/);
    expect(revs.stdout).toMatch(/web-\w+\s+statefulset\.apps\/web\s+3\s/);
  });

  it('create cronjob, get it, and create a job from it', async () => {
    const c = await k(['create', 'cronjob', 'hello', '--image=busybox', '--schedule=*/1 * * * *', '--', 'echo', 'hi']);
    expect(c.stderr).toBe('');
    expect(c.stdout).toContain('cronjob.batch/hello created');
    await waitFor(async () => /hello\s+\*\/1 \* \* \* \*\s+<none>\s+False\s+\d+\s+\d+(ms|s)/
      .test((await k(['get', 'cronjob', 'hello'])).stdout), 30_000, 'a last schedule');
    const g = await k(['get', 'cronjob']);
    expect(g.stdout).toMatch(/^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\n/);
    const j = await k(['create', 'job', 'manual', '--from=cronjob/hello']);
    expect(j.stderr).toBe('');
    expect(j.stdout).toContain('job.batch/manual created');
    const job = await client().get<Job>(ref('jobs', 'default', 'batch'), 'manual');
    expect(job.metadata.annotations?.['cronjob.kubernetes.io/instantiate']).toBe('manual');
    expect(job.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'CronJob', name: 'hello' });
    expect(job.spec?.template.spec?.containers[0]?.command).toEqual(['echo', 'hi']);
    const bad = await k(['create', 'cronjob', 'bad', '--image=busybox', '--schedule=61 * * * *']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61');
  });
});
