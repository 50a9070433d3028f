// The real kubectl 1.27 (OpenAPI v2 as protobuf) and 1.33 (OpenAPI v3) against kdp's upstream
// schemas: explain at any depth, client-side apply computing strategic merge patches from the
// schemas' merge keys, and server-side field validation answering unknown fields as upstream.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlMissing, startKubectlHarness } from './helpers/kubectl.js';
import type { KubectlHarness } from './helpers/kubectl.js';

const MINORS = [27, 33].filter((m) => !kubectlMissing(m));

function deployment(containers: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
${containers}`;
}

const FIRST = deployment(`      - name: app
        image: nginx:1
        ports:
        - {containerPort: 80, name: http}
        - {containerPort: 443, name: https}
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
        - {name: C, value: "3"}
      - name: sidecar
        image: busybox
        ports:
        - {containerPort: 9000}
`);

// Drops the sidecar, port 443 and env B; changes A; adds port 8080, env D and a new container.
const SECOND = deployment(`      - name: logger
        image: busybox:2
      - name: app
        image: nginx:2
        ports:
        - {containerPort: 8080, name: alt}
        - {containerPort: 80, name: http}
        env:
        - {name: D, value: "4"}
        - {name: A, value: "10"}
        - {name: C, value: "3"}
`);

function netpol(ports: string): string {
  return `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: np}
spec:
  podSelector: {matchLabels: {app: web}}
  ingress:
  - ports:
${ports}`;
}

const UNKNOWN_FIELD = `apiVersion: v1
kind: Pod
metadata: {name: bogus}
spec:
  containers:
  - name: c
    image: nginx
    bogus: 1
`;

describe.skipIf(MINORS.length === 0)('kubectl with upstream OpenAPI schemas', () => {
  let h: KubectlHarness;
  beforeAll(async () => { h = await startKubectlHarness(); });
  afterAll(async () => { await h?.close(); });

  for (const minor of MINORS) {
    it(`kubectl 1.${minor} explains fields at any depth`, async () => {
      const cases: [string[], RegExp][] = [
        [['explain', 'pod.spec.containers.ports'], /FIELD: +ports <\[\]ContainerPort>[\s\S]*containerPort\s+<integer> -required-/],
        [['explain', 'deployment.spec.strategy.rollingUpdate', '--recursive'], /maxSurge\s+<(IntOrString|string)>[\s\S]*maxUnavailable/],
        [['explain', 'svc'], /KIND: +Service[\s\S]*spec\s+<ServiceSpec>/],
        [['explain', 'networkpolicy.spec.ingress.from'], /FIELD: +from <\[\]NetworkPolicyPeer>[\s\S]*ipBlock/],
        [['explain', 'cronjob.spec'], /KIND: +CronJob[\s\S]*schedule\s+<string> -required-/],
        [["explain", "pdb"], /KIND: +PodDisruptionBudget[\s\S]*spec\s+<(Object|PodDisruptionBudgetSpec)>/],
      ];
      for (const [args, want] of cases) {
        const r = await h.kubectl(args, { minor });
        expect(r.stderr, args.join(' ')).toBe('');
        expect(r.code, args.join(' ')).toBe(0);
        expect(r.stdout, args.join(' ')).toMatch(want);
      }
      const res = await h.kubectl(['api-resources'], { minor });
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/^cronjobs +cj +batch\/v1 +true +CronJob$/m);
    });

    it(`kubectl 1.${minor} create -f with an unknown field: the server's strict decoding error`, async () => {
      const f = await h.file(`bogus-${minor}.yaml`, UNKNOWN_FIELD);
      const strict = await h.kubectl(['create', '-f', f], { minor });
      expect(strict.code).toBe(1);
      expect(strict.stderr.trim()).toBe(`Error from server (BadRequest): error when creating "${f}": ` +
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: ' +
        'unknown field "spec.containers[0].bogus"');
      const warn = await h.kubectl(['create', '--validate=warn', '-f', f], { minor });
      expect(warn.code).toBe(0);
      expect(warn.stderr).toContain('Warning: unknown field "spec.containers[0].bogus"');
      await h.kubectl(['delete', 'pod', 'bogus', '--wait=false'], { minor });
      const off = await h.kubectl(['create', '--validate=false', '-f', f], { minor });
      expect(off.stderr).toBe('');
      expect(off.stdout.trim()).toBe('pod/bogus created');
      // Stored without the field, as upstream's decoder drops it.
      const stored = JSON.parse((await h.kubectl(['get', 'pod', 'bogus', '-o', 'json'], { minor }))
        .stdout);
      expect(stored.spec.containers[0]).not.toHaveProperty('bogus');
      await h.kubectl(['delete', 'pod', 'bogus', '--wait=false'], { minor });
    });

    it(`kubectl 1.${minor} apply twice edits containers, ports and env by their merge keys`, async () => {
      const ns = `apply-${minor}`;
      expect((await h.kubectl(['create', 'namespace', ns], { minor })).code).toBe(0);
      const first = await h.file(`first-${minor}.yaml`, FIRST);
      const second = await h.file(`second-${minor}.yaml`, SECOND);
      const a1 = await h.kubectl(['apply', '-n', ns, '-f', first], { minor });
      expect(a1.stderr).toBe('');
      expect(a1.stdout.trim()).toBe('deployment.apps/web created');
      const a2 = await h.kubectl(['apply', '-n', ns, '-f', second], { minor });
      expect(a2.stderr).toBe('');
      expect(a2.stdout.trim()).toBe('deployment.apps/web configured');
      const got = await h.kubectl(['get', 'deploy', 'web', '-n', ns, '-o', 'json'], { minor });
      const spec = JSON.parse(got.stdout).spec.template.spec;
      expect(spec.containers.map((c: any) => [c.name, c.image]))
        .toEqual([['logger', 'busybox:2'], ['app', 'nginx:2']]);
      const app = spec.containers[1];
      expect(app.ports.map((p: any) => [p.containerPort, p.name]))
        .toEqual([[8080, 'alt'], [80, 'http']]);
      expect(app.env).toEqual([{ name: 'D', value: '4' }, { name: 'A', value: '10' },
        { name: 'C', value: '3' }]);
      const a3 = await h.kubectl(['apply', '-n', ns, '-f', second], { minor });
      expect(a3.stdout.trim()).toBe('deployment.apps/web unchanged');
      const back = await h.kubectl(['apply', '-n', ns, '-f', first], { minor });
      expect(back.stdout.trim()).toBe('deployment.apps/web configured');
      const again = JSON.parse((await h.kubectl(['get', 'deploy', 'web', '-n', ns, '-o', 'json'],
        { minor })).stdout).spec.template.spec;
      expect(again.containers.map((c: any) => c.name)).toEqual(['app', 'sidecar']);
      expect(again.containers[0].ports.map((p: any) => p.containerPort)).toEqual([80, 443]);
      expect(again.containers[0].env.map((e: any) => `${e.name}=${e.value}`))
        .toEqual(['A=1', 'B=2', 'C=3']);
    });

    it(`kubectl 1.${minor} apply twice replaces NetworkPolicy ports, an atomic list upstream`, async () => {
      const ns = `np-${minor}`;
      expect((await h.kubectl(['create', 'namespace', ns], { minor })).code).toBe(0);
      const one = await h.file(`np1-${minor}.yaml`, netpol('    - {port: 80}\n    - {port: 443}\n'));
      const two = await h.file(`np2-${minor}.yaml`, netpol('    - {port: 8080}\n'));
      expect((await h.kubectl(['apply', '-n', ns, '-f', one], { minor })).code).toBe(0);
      const r = await h.kubectl(['apply', '-n', ns, '-f', two], { minor });
      expect(r.stdout.trim()).toBe('networkpolicy.networking.k8s.io/np configured');
      const got = JSON.parse((await h.kubectl(['get', 'netpol', 'np', '-n', ns, '-o', 'json'],
        { minor })).stdout);
      expect(got.spec.ingress[0].ports.map((p: any) => p.port)).toEqual([8080]);
    });
  }
});
