// Everything a running kdp cluster stores decodes strictly against upstream's schemas: no field
// upstream does not declare, so `kubectl replace -f`/`kubectl edit` of what `kubectl get`
// printed passes server-side field validation (Strict, kubectl's default).

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedFieldChecker } from '../../src/apiserver/openapi/unknown-fields.js';
import { buildDefaultCatalog } from '../../src/apiserver/resources.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { waitFor } from '../helpers/cluster.js';

const run = promisify(execFile);
const KUBECTL = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33';
const hasKubectl = existsSync(KUBECTL);
if (!hasKubectl && process.env.CI === 'true') throw new Error(`CI=true but ${KUBECTL} is missing`);

const WORKLOADS = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx, ports: [{containerPort: 80}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: busybox}]}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: tick}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec: {template: {spec: {restartPolicy: Never, containers: [{name: t, image: busybox}]}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
`;

describe.runIf(hasKubectl)('objects a kdp cluster stores against the upstream schemas', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-schema-'));
  const paths = dataDirPaths(dataDir);
  const cache = mkdtempSync(join(tmpdir(), 'kdp-kc-'));
  let cluster: RunningCluster;
  const kubectl = async (args: string[], input?: string) => {
    const p = run(KUBECTL, ['--kubeconfig', paths.kubeconfig, '--cache-dir', cache, ...args]);
    if (input !== undefined) p.child.stdin!.end(input);
    return (await p).stdout;
  };

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'iptables', timeScale: 20,
      progress: () => {} });
  }, 120_000);
  afterAll(async () => { await cluster?.close(); });

  it('declare no field upstream does not know, in any served resource', async () => {
    await kubectl(['apply', '-f', '-'], WORKLOADS);
    await waitFor(async () => JSON.parse(await kubectl(['get', 'deploy', 'web', '-o', 'json']))
      .status?.readyReplicas === 2, 60_000, 'web ready');
    const checker = sharedFieldChecker();
    const found: string[] = [];
    const kinds = new Set<string>();
    for (const r of buildDefaultCatalog().all) {
      if (!r.verbs.includes('list')) continue;
      const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
      const list = JSON.parse(await kubectl(['get', '--raw', `${base}/${r.resource}`]));
      for (const o of list.items ?? []) {
        kinds.add(r.kind);
        const obj = { apiVersion: r.group ? `${r.group}/${r.version}` : r.version, kind: r.kind,
          ...o };
        for (const f of checker.unknownFields(r.group, r.version, r.kind, obj)) {
          found.push(`${r.resource} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}: ${f}`);
        }
      }
    }
    expect(found).toEqual([]);
    for (const k of ['Pod', 'Node', 'EndpointSlice', 'StatefulSet', 'ReplicaSet',
      'ControllerRevision', 'Lease', 'Event', 'PodDisruptionBudget', 'CronJob']) {
      expect(kinds, k).toContain(k);
    }
  }, 120_000);
});
