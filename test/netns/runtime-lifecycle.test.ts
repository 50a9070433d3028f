import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/client/types.js';
import type { EndpointSlice, Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' } as const;
const SLICES = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', namespace: 'default' } as const;

/** GET http://ip:port/path from inside `netns`; the status code. */
async function httpGet(netns: string, ip: string, port: number, path: string): Promise<number> {
  const js = `require('http').get({host:process.argv[1],port:+process.argv[2],path:process.argv[3]},` +
    `(r)=>{console.log(r.statusCode);r.resume();}).on('error',(e)=>{console.log(0)})`;
  const { stdout } = await exec.run(process.execPath, ['-e', js, ip, String(port), path],
    { netns, timeoutMs: 60_000 });
  return Number(stdout.trim());
}

const isReady = (p: Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

function pod(name: string, extra: Partial<NonNullable<Pod['spec']>>, env: Record<string, string> = {},
  probe?: NonNullable<Pod['spec']>['containers'][number]['readinessProbe']): Pod {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: name } },
    spec: {
      nodeName: 'n1', ...extra,
      containers: [{
        name: 'echo', image: 'kdp/echo', ports: [{ name: 'http', containerPort: 8080 }],
        env: Object.entries(env).map(([n, value]) => ({ name: n, value })),
        ...(probe ? { readinessProbe: probe } : {}),
      }],
    },
  } as Pod;
}

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter']))('netns runtime: probes, restarts, stop', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-rtl-')));
  const prefix = hostPrefixFor(paths);
  const nodeNs = `${prefix}-n1`;
  let cluster: RunningCluster | undefined;
  const client = () => cluster!.client;
  const get = (name: string) => client().get<Pod>(PODS, name);
  const rules = async () => (await exec.run('nft', ['list', 'table', 'ip', 'kube-proxy'], { netns: nodeNs })).stdout;

  beforeAll(async () => {
    // timeScale 10: probe periods and restart back-off run ten times faster.
    cluster = await startCluster({
      paths, nodes: 1, port: 0, proxyMode: 'nftables', timeScale: 10, dataPlane: 'netns', progress: () => {},
    });
  }, 60_000);

  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, prefix);
  }, 30_000);

  it('a pod failing its readiness probe stays out of the EndpointSlice and the kernel rules until it passes',
    async () => {
      await client().create(PODS, pod('probed', {}, { KDP_ECHO_HEALTHY: 'false' },
        { httpGet: { path: '/kdp/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 2 }));
      await client().create(SVC, {
        apiVersion: 'v1', kind: 'Service', metadata: { name: 'probed', namespace: 'default' },
        spec: { clusterIP: '10.96.0.90', selector: { app: 'probed' }, ports: [{ port: 80, targetPort: 8080 }] },
      });
      const ip = await waitFor(async () => (await get('probed')).status?.podIP, 30_000, 'a pod IP');
      const endpointReady = async () => {
        const s = (await client().list<EndpointSlice>(SLICES)).items
          .find((x) => x.metadata.labels?.['kubernetes.io/service-name'] === 'probed');
        return s?.endpoints?.find((e) => e.addresses.includes(ip))?.conditions?.ready;
      };
      // Listening (the probe reaches it) but unhealthy: published, not ready, not in the rules.
      await waitFor(async () => (await endpointReady()) === false, 30_000, 'a not-ready endpoint');
      const p = await get('probed');
      expect(isReady(p)).toBe(false);
      expect(p.status!.containerStatuses![0]).toMatchObject({ ready: false, state: { running: {} } });
      expect(await rules()).not.toContain(ip);

      // Not ready may mean "not listening yet" (the probe was refused): retry until it answers.
      await waitFor(async () => (await httpGet(nodeNs, ip, 8080, '/kdp/recover')) === 200,
        30_000, 'the workload answering /kdp/recover');
      await waitFor(async () => isReady(await get('probed')), 30_000, 'Ready after recovering');
      await waitFor(async () => (await endpointReady()) === true, 30_000, 'a ready endpoint');
      await waitFor(async () => (await rules()).includes(ip), 30_000, 'the endpoint in the kernel rules');

      expect(await httpGet(nodeNs, ip, 8080, '/kdp/fail')).toBe(200);
      await waitFor(async () => !isReady(await get('probed')), 30_000, 'not Ready after failing');
      await waitFor(async () => !(await rules()).includes(ip), 30_000, 'the endpoint out of the rules');
      // Each failed probe is the kubelet's Warning Unhealthy on the container.
      const ev = await waitFor(async () => (await client().list<KubeObject & { reason: string; message: string;
        type: string; involvedObject: { name: string; fieldPath?: string } }>(
        { group: '', version: 'v1', resource: 'events', namespace: 'default' })).items
        .find((e) => e.reason === 'Unhealthy' && e.involvedObject.name === 'probed'
          && e.message.includes('statuscode: 503')), 30_000, 'an Unhealthy event');
      expect(ev).toMatchObject({ type: 'Warning', message: 'Readiness probe failed: HTTP probe failed with statuscode: 503',
        involvedObject: { fieldPath: 'spec.containers{echo}' } });
    }, 90_000);

  it('restartPolicy Always restarts a crashing container with back-off, counting restarts', async () => {
    await client().create(PODS, pod('crashy', {}, { KDP_ECHO_EXIT_AFTER_MS: '200', KDP_ECHO_EXIT_CODE: '3' }));
    const seen = new Set<string>();
    const p = await waitFor(async () => {
      const cur = await get('crashy');
      const cs = cur.status?.containerStatuses?.[0];
      if (cs?.state?.waiting?.reason) seen.add(cs.state.waiting.reason);
      return (cs?.restartCount ?? 0) >= 2 ? cur : undefined;
    }, 60_000, 'two restarts');
    const cs = p.status!.containerStatuses![0]!;
    expect(cs.lastState?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(p.status!.phase).toBe('Running');
    await waitFor(async () => {
      const w = (await get('crashy')).status?.containerStatuses?.[0]?.state?.waiting;
      if (w?.reason === 'CrashLoopBackOff') seen.add(w.reason);
      return seen.has('CrashLoopBackOff') || undefined;
    }, 60_000, 'CrashLoopBackOff');
    await client().delete(PODS, 'crashy', { gracePeriodSeconds: 0 });
  }, 90_000);

  it('restartPolicy OnFailure completes on exit 0; Never fails on exit 3 without restarting', async () => {
    await client().create(PODS, pod('job-ok', { restartPolicy: 'OnFailure' }, { KDP_ECHO_EXIT_AFTER_MS: '200', KDP_ECHO_EXIT_CODE: '0' }));
    await client().create(PODS, pod('job-bad', { restartPolicy: 'Never' }, { KDP_ECHO_EXIT_AFTER_MS: '200', KDP_ECHO_EXIT_CODE: '3' }));
    const ok = await waitFor(async () => { const x = await get('job-ok'); return x.status?.phase === 'Succeeded' ? x : undefined; },
      30_000, 'job-ok Succeeded');
    const bad = await waitFor(async () => { const x = await get('job-bad'); return x.status?.phase === 'Failed' ? x : undefined; },
      30_000, 'job-bad Failed');
    expect(ok.status!.containerStatuses![0]).toMatchObject({ restartCount: 0, state: { terminated: { exitCode: 0 } } });
    expect(bad.status!.containerStatuses![0]).toMatchObject({ restartCount: 0, state: { terminated: { exitCode: 3 } } });
  }, 60_000);

  it('deleting a pod sends SIGTERM at once: it goes long before its grace period', async () => {
    await client().create(PODS, pod('graceful', { terminationGracePeriodSeconds: 3000 }));
    await waitFor(async () => isReady(await get('graceful')), 30_000, 'graceful Ready');
    await client().delete(PODS, 'graceful');
    // 3000 s × timeScale 0.1 = 300 s of grace: gone within the wait means SIGTERM ended it.
    await waitFor(async () => (await get('graceful').catch(() => undefined)) === undefined || undefined,
      30_000, 'the pod to go');
  }, 60_000);
});
