// Request-pipeline costs of the security pieces, seeded: RBAC decisions over the bootstrap
// policy plus many namespace bindings, protobuf decoding of a captured kubectl body, Service
// allocations through the ServiceIPs admission plugin, and a cold ensurePki.
// Run: node bin/run-ts.js bench/security-pipeline.ts
// Rates are per CPU second of this process (process.cpuUsage), so a busy machine slows the
// wall clock but not the figure; wall-clock figures are printed beside them.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildServiceIPsPlugin } from '../src/apiserver/admission/index.js';
import { bootstrapRbacObjects, buildAuthorizer } from '../src/apiserver/authz/index.js';
import type { RbacResource } from '../src/apiserver/authz/index.js';
import type { AdmissionRequest, UserInfo } from '../src/apiserver/pipeline-types.js';
import { ensurePki } from '../src/apiserver/pki/index.js';
import { decodeKubernetesProtobuf } from '../src/apiserver/protobuf/index.js';
import type { KubeObject } from '../src/client/types.js';
import { report, seededRandom } from './lib-bench.js';

/** CPU seconds and wall seconds spent in `fn`. */
async function timed(fn: () => Promise<void> | void): Promise<{ cpu: number; wall: number }> {
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  await fn();
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1e6, wall: (performance.now() - w0) / 1000 };
}

const KIND: Record<RbacResource, string> = { roles: 'Role', rolebindings: 'RoleBinding',
  clusterroles: 'ClusterRole', clusterrolebindings: 'ClusterRoleBinding' };

async function benchRbac(): Promise<void> {
  const objs: KubeObject[] = [...bootstrapRbacObjects()];
  for (let i = 0; i < 200; i++) {
    objs.push({ kind: 'RoleBinding', metadata: { name: `rb${i}`, namespace: `ns${i % 20}` },
      roleRef: { kind: 'ClusterRole', name: 'edit' },
      subjects: [{ kind: 'User', name: `user${i}` }] });
  }
  const source = { list: async (r: RbacResource, ns?: string) => objs.filter((o) =>
    o.kind === KIND[r] && (ns === undefined || o.metadata.namespace === ns)) };
  const authz = buildAuthorizer({ mode: 'RBAC', source });
  const rnd = seededRandom(1);
  const n = 20_000;
  let allowed = 0;
  const t = await timed(async () => {
    for (let i = 0; i < n; i++) {
      const k = Math.floor(rnd() * 200);
      const user: UserInfo = { name: `user${k}`, groups: ['system:authenticated'] };
      const d = await authz.authorize({ user, verb: 'create', resourceRequest: true,
        apiGroup: 'apps', resource: 'deployments', namespace: `ns${Math.floor(rnd() * 20)}` });
      if (d.allowed) allowed++;
    }
  });
  report('rbac decisions (222 bindings, aggregated edit role)', n / t.cpu,
    'decisions/cpu-s', { op: '>=', value: 10_000 });
  report('rbac decisions, wall clock', n / t.wall, 'decisions/s');
  report('rbac allowed fraction (1 in 20 expected)', allowed / n, '');
}

// `kubectl.1.32 create deployment web --image=nginx:1.27 --replicas=3 --port=80` (captured).
const DEPLOYMENT = Buffer.from('azhzAAoVCgdhcHBzL3YxEgpEZXBsb3ltZW50Er0BCh8KA3dlYhIAGgAiACoAMgA4A' +
  'EIAWgoKA2FwcBIDd2ViEosBCAMSDAoKCgNhcHASA3dlYhpxChwKABIAGgAiACoAMgA4AEIAWgoKA2FwcBIDd2ViElES' +
  'MwoFbmdpbngSCm5naW54OjEuMjcqADIKCgAQABhQIgAqAEIAagByAIABAIgBAJABAKIBABoAMgBCAEoAUgBYAGAAaAC' +
  'CAQCKAQCaAQDCAQAiAgoAKAA4ABoMCAAQABgAIAAoADgAGgAiAA==', 'base64');

async function benchProtobuf(): Promise<void> {
  const n = 30_000;
  const t = await timed(() => {
    for (let i = 0; i < n; i++) decodeKubernetesProtobuf(DEPLOYMENT);
  });
  report('protobuf decode (Deployment, 223 B)', n / t.cpu, 'decodes/cpu-s',
    { op: '>=', value: 20_000 });
  report('protobuf decode, wall clock', n / t.wall, 'decodes/s');
}

async function benchAllocation(type: 'ClusterIP' | 'NodePort', n: number): Promise<void> {
  const stored: KubeObject[] = [];
  const source = { get: async () => undefined, list: async () => stored };
  const plugin = buildServiceIPsPlugin({ serviceCIDRs: ['10.96.0.0/12'],
    nodePortRange: '30000-32767', source, random: seededRandom(2) });
  const t = await timed(async () => {
    for (let i = 0; i < n; i++) {
      const obj: KubeObject = { kind: 'Service', metadata: { name: `s${i}`, namespace: 'd' },
        spec: { type, ipFamilyPolicy: 'SingleStack', ports: [{ port: 80 }] } };
      const req: AdmissionRequest = { operation: 'CREATE', group: '', version: 'v1',
        resource: 'services', namespace: 'd', name: obj.metadata.name, object: obj,
        user: { name: 'a', groups: [] }, dryRun: false };
      await plugin.admit!(req);
      stored.push(obj);
      await plugin.committed!(req);
    }
  });
  report(`service allocations (${type}, ${n} services)`, n / t.cpu, 'services/cpu-s',
    { op: '>=', value: 10_000 });
}

async function benchPki(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kdp-bench-pki-'));
  try {
    const cold = await timed(() => ensurePki(dir).then(() => undefined));
    const warm = await timed(() => ensurePki(dir).then(() => undefined));
    report('ensurePki cold (CA + 2 certs + token, first use of the x509 library)',
      cold.cpu * 1000, 'cpu-ms', { op: '<=', value: 1000 });
    report('ensurePki warm (verify and reload)', warm.cpu * 1000, 'cpu-ms',
      { op: '<=', value: 50 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await benchRbac();
await benchProtobuf();
await benchAllocation('ClusterIP', 20_000);
await benchAllocation('NodePort', 2_500);
await benchPki();
