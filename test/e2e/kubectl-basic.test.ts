// The real kubectl (1.32, which sends protobuf for create generators) against kdp's API server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlMissing, startKubectlHarness } from '../apiserver/helpers/kubectl.js';
import type { KubectlHarness } from '../apiserver/helpers/kubectl.js';

const skip = kubectlMissing(32);

const DEPLOY_YAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {tier: fe}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
        env: [{name: A, value: "1"}]
`;

const NODE_YAML = `apiVersion: v1
kind: Node
metadata: {name: n1, labels: {node-role.kubernetes.io/control-plane: ""}}
status:
  conditions: [{type: Ready, status: "True"}]
  addresses: [{type: InternalIP, address: 172.18.0.2}]
  nodeInfo: {kubeletVersion: v1.33.0}
`;

describe.skipIf(skip)('kubectl 1.32 against kdp (kubectl binary present)', () => {
  let h: KubectlHarness;
  const k = (...args: string[]) => h.kubectl(args);
  const ok = async (...args: string[]) => {
    const r = await k(...args);
    expect(r.stderr, `kubectl ${args.join(' ')}`).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    return r.stdout;
  };
  beforeAll(async () => { h = await startKubectlHarness(); });
  afterAll(async () => { await h?.close(); });

  it('version reports the server and api-resources lists the served kinds', async () => {
    expect(await ok('version')).toMatch(/Server Version: v1\.33\./);
    const res = await ok('api-resources');
    expect(res).toMatch(/^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
    expect(res).toMatch(/^pods\s+po\s+v1\s+true\s+Pod$/m);
  });

  it('the bootstrap namespaces and kubernetes Service are there', async () => {
    const ns = await ok('get', 'ns');
    for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      expect(ns).toMatch(new RegExp(`^${n}\\s+Active`, 'm'));
    }
    expect(await ok('get', 'svc', 'kubernetes'))
      .toMatch(/kubernetes\s+ClusterIP\s+10\.96\.0\.1\s+<none>\s+443\/TCP/);
  });

  it('create generators (protobuf bodies) work for ns, deploy, svc, cm, secret', async () => {
    expect(await ok('create', 'namespace', 'team')).toContain('namespace/team created');
    expect(await ok('create', 'deployment', 'nginx', '--image=nginx:1.27', '--replicas=2',
      '--port=80')).toContain('deployment.apps/nginx created');
    expect(await ok('create', 'service', 'clusterip', 'svc1', '--tcp=80:8080'))
      .toContain('service/svc1 created');
    expect(await ok('create', 'configmap', 'cm1', '--from-literal=a=b')).toContain('created');
    expect(await ok('create', 'secret', 'generic', 's1', '--from-literal=x=y'))
      .toContain('created');
    const json = JSON.parse(await ok('get', 'deploy', 'nginx', '-o', 'json'));
    expect(json.spec.replicas).toBe(2);
    expect(json.spec.template.spec.containers[0].ports[0]).toEqual({ containerPort: 80,
      protocol: 'TCP' });
    const again = await k('create', 'deployment', 'nginx', '--image=x');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('deployments.apps "nginx" already exists');
  });

  it('get prints server-side tables: wide, -A, -l, --show-labels, yaml', async () => {
    const wide = await ok('get', 'deploy', '-o', 'wide');
    expect(wide).toMatch(
      /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/m);
    expect(wide).toMatch(/^nginx\s+0\/2\s+0\s+0\s+\S+\s+nginx\s+nginx:1\.27\s+app=nginx$/m);
    const all = await ok('get', 'svc', '-A');
    expect(all).toMatch(/^default\s+svc1\s+ClusterIP\s+10\.\d+\.\d+\.\d+\s+<none>\s+80\/TCP/m);
    expect(await ok('get', 'deploy', '-l', 'app in (nginx)', '--show-labels'))
      .toMatch(/nginx.*app=nginx$/m);
    expect(await ok('get', 'cm', 'cm1', '-o', 'yaml')).toMatch(/^data:\n {2}a: b$/m);
    const none = await k('get', 'pods', '-n', 'team');
    expect(none.stderr).toContain('No resources found in team namespace.');
  });

  it('apply (client-side) creates, leaves unchanged and configures', async () => {
    const f = await h.file('d.yaml', DEPLOY_YAML.replace('REPLICAS', '1'));
    expect(await ok('apply', '-f', f)).toContain('deployment.apps/web created');
    expect(await ok('apply', '-f', f)).toContain('deployment.apps/web unchanged');
    await h.file('d.yaml', DEPLOY_YAML.replace('REPLICAS', '3'));
    expect(await ok('apply', '-f', f)).toContain('deployment.apps/web configured');
    expect(await ok('get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}')).toBe('3');
  });

  it('apply --server-side applies and reports conflicts with other managers', async () => {
    const f = await h.file('s.yaml', DEPLOY_YAML.replace('REPLICAS', '2').replace(/web/g, 'ssa'));
    expect(await ok('apply', '--server-side', '-f', f)).toContain('serverside-applied');
    await ok('scale', 'deploy', 'ssa', '--replicas=5');
    const c = await k('apply', '--server-side', '-f', f);
    expect(c.code).not.toBe(0);
    expect(c.stderr).toContain('conflict');
    expect(await ok('apply', '--server-side', '--force-conflicts', '-f', f))
      .toContain('serverside-applied');
    expect(await ok('get', 'deploy', 'ssa', '-o', 'jsonpath={.spec.replicas}')).toBe('2');
  });

  it('label, annotate, patch (strategic, merge, json) and scale', async () => {
    expect(await ok('label', 'deploy', 'web', 'x=y')).toContain('labeled');
    expect(await ok('annotate', 'deploy', 'web', 'a=b')).toContain('annotated');
    await ok('patch', 'deploy', 'web', '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}');
    await ok('patch', 'deploy', 'web', '--type=merge', '-p', '{"metadata":{"labels":{"m":"1"}}}');
    await ok('patch', 'deploy', 'web', '--type=json', '-p',
      '[{"op":"replace","path":"/spec/replicas","value":4}]');
    const d = JSON.parse(await ok('get', 'deploy', 'web', '-o', 'json'));
    expect(d.metadata.labels).toMatchObject({ tier: 'fe', x: 'y', m: '1' });
    expect(d.metadata.annotations.a).toBe('b');
    expect(d.spec.replicas).toBe(4);
    expect(d.spec.template.spec.containers[0]).toMatchObject({ image: 'nginx:1.28',
      env: [{ name: 'A', value: '1' }], ports: [{ containerPort: 80, protocol: 'TCP' }] });
    expect(await ok('scale', 'deploy', 'web', '--replicas=2')).toContain('scaled');
    expect(await ok('scale', 'deploy', 'web', '--current-replicas=2', '--replicas=5'))
      .toContain('scaled');
    expect(await ok('get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}')).toBe('5');
  });

  it('describe shows pods, services and nodes', async () => {
    await ok('run', 'p1', '--image=nginx:1.27', '--labels=app=p1');
    const pod = await ok('describe', 'pod', 'p1');
    expect(pod).toMatch(/^Name:\s+p1$/m);
    expect(pod).toMatch(/^Status:\s+Pending$/m);
    const svc = await ok('describe', 'svc', 'svc1');
    expect(svc).toMatch(/^Port:\s+80-8080\s+80\/TCP$/m);
    expect(svc).toMatch(/^TargetPort:\s+8080\/TCP$/m);
    await ok('apply', '-f', await h.file('n.yaml', NODE_YAML));
    expect(await ok('get', 'nodes', '-o', 'wide'))
      .toMatch(/^n1\s+Ready\s+control-plane\s+\S+\s+v1\.33\.0\s+172\.18\.0\.2/m);
    expect(await ok('describe', 'node', 'n1')).toMatch(/^Roles:\s+control-plane$/m);
  });

  it('get -w prints the change it watched', async () => {
    const watch = h.kubectl(['get', 'cm', '-w', '--request-timeout=4s'], { timeoutMs: 15_000 });
    await new Promise((r) => setTimeout(r, 1500));
    await ok('create', 'configmap', 'watched');
    const r = await watch;
    expect(r.stdout).toMatch(/^watched\s+0\s+/m);
  });

  it('auth can-i asks the server', async () => {
    expect((await ok('auth', 'can-i', 'create', 'pods')).trim()).toBe('yes');
  });

  it('delete removes objects and reports a missing one', async () => {
    expect(await ok('delete', 'deploy', 'web', 'nginx')).toContain('deleted');
    expect(await ok('delete', 'pod', 'p1')).toContain('pod "p1" deleted');
    expect(await ok('get', 'deploy', 'ssa', '-o', 'name')).toBe('deployment.apps/ssa\n');
    const gone = await k('get', 'deploy', 'web');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('Error from server (NotFound): deployments.apps "web" not found');
  });
});
