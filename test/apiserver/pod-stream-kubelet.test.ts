// pods/exec through the API server to a node's kubelet API with the real kubectl: RBAC on the
// subresource first (403 for a user without pods/exec), then the upgrade is re-sent over TLS with
// the API server's kube-apiserver-kubelet-client certificate to the kubelet (src/kubelet/server),
// which runs the command through a StreamingRuntime (here: the host-process fake from src).

import { connect, type AddressInfo } from 'node:net';
import type { Server } from 'node:https';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { caOf, issueLeaf } from '../../src/apiserver/pki/index.js';
import type { BackendDialer } from '../../src/apiserver/proxy/backend-dialer.js';
import { buildKubeletServer } from '../../src/kubelet/server/kubelet-server.js';
import type { StreamingRuntime } from '../../src/kubelet/streams.js';
import { childProcessStream, loopbackDial } from '../../src/streaming/index.js';
import { kubectlMissing, startKubectlHarness, type KubectlHarness } from './helpers/kubectl.js';

for (const MINOR of [27, 33]) {
  describe.skipIf(kubectlMissing(MINOR) || kubectlMissing(33))(`pods/exec through the kubelet API (kubectl 1.${MINOR})`, () => {
    let h: KubectlHarness;
    let kubelet: Server;
    const users: string[] = [];
    const dials: string[] = [];
    const dialer: BackendDialer = {
      dial: (t) => new Promise<Duplex>((resolve, reject) => {
        dials.push(`${t.node} ${t.ip}:${t.port}`);
        const s = connect((kubelet.address() as AddressInfo).port, '127.0.0.1');
        s.once('connect', () => resolve(s));
        s.once('error', reject);
      }),
    };
    const streaming: StreamingRuntime = {
      exec: (_uid, _c, argv, opts) => childProcessStream(argv, opts),
      attach: () => Promise.reject(new Error('no attach here')),
      portForward: (_uid, port) => loopbackDial()(port),
    };

    beforeAll(async () => {
      h = await startKubectlHarness({ backendDialer: dialer, authorizationMode: 'RBAC' });
      const serving = await issueLeaf(caOf(h.server.pki), { commonName: 'n1', usage: 'server', sans: ['DNS:n1', 'IP:10.0.0.1', 'IP:127.0.0.1'] });
      let pod: Pod | undefined;
      kubelet = buildKubeletServer({
        nodeName: 'n1', tls: { ...serving, caPem: h.server.pki.caCertPem },
        async authorize(user) { users.push(user.name); return user.groups.includes('system:masters'); },
        pod: (ns, name) => pod ?? { metadata: { name, namespace: ns, uid: 'u1' } } as Pod,
        pods: () => [{ metadata: { name: 'web', namespace: 'default', uid: 'u1' } } as Pod],
        streaming,
      });
      await new Promise<void>((r) => kubelet.listen(0, '127.0.0.1', r));
      // n2's endpoint is the same kubelet: it answers with n1's certificate (10.0.0.1, not n2's 10.0.0.2).
      const nodeWithPod = (node: string, pod: string) => `
apiVersion: v1
kind: Node
metadata: {name: ${node}}
---
apiVersion: v1
kind: Pod
metadata: {name: ${pod}, namespace: default}
spec:
  nodeName: ${node}
  containers: [{name: c, image: kdp/echo}]
---`;
      const apply = await h.kubectl(['create', '-f', await h.file('objs.yaml', `${nodeWithPod('n1', 'web')}${nodeWithPod('n2', 'impostor')}
apiVersion: v1
kind: Pod
metadata: {name: nowhere, namespace: default}
spec:
  containers: [{name: c, image: kdp/echo}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: default}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: jane-reads, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: jane}]
`)], { minor: 33 }); // setup with one client; the exec calls below use MINOR
      expect(apply.stderr).toBe('');
      expect(apply.code).toBe(0);
      for (const [node, ip] of [['n1', '10.0.0.1'], ['n2', '10.0.0.2']]) {
        const st = await h.kubectl(['patch', 'node', node!, '--subresource=status', '--type=merge', '-p',
          `{"status":{"addresses":[{"type":"InternalIP","address":"${ip}"}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}}}}`],
        { minor: 33 });
        expect(st.stderr).toBe('');
      }
    }, 60_000);
    afterAll(async () => {
      await h?.close();
      kubelet?.close();
    });

    it('runs the command on the kubelet as kube-apiserver-kubelet-client, with output and exit code', async () => {
      const r = await h.kubectl(['exec', 'web', '--', 'sh', '-c', 'echo hello; exit 3'], { minor: MINOR });
      expect(r.stdout).toBe('hello\n');
      expect(r.stderr).toContain('command terminated with exit code 3');
      expect(r.code).toBe(3);
      expect(users).toContain('kube-apiserver-kubelet-client');
      expect(dials).toContain('n1 10.0.0.1:10250');
    });

    it('refuses a user without pods/exec rights with 403 before dialing the kubelet', async () => {
      dials.length = 0;
      const r = await h.kubectl(['exec', 'web', '--as', 'jane', '--', 'true'], { minor: MINOR });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('Forbidden');
      expect(r.stderr).toContain('pods/exec');
      expect(dials).toEqual([]);
    });

    it('serves nodes/proxy from the kubelet: get --raw …/proxy/pods and /healthz; 403 without rights', async () => {
      const pods = await h.kubectl(['get', '--raw', '/api/v1/nodes/n1/proxy/pods'], { minor: MINOR });
      expect(pods.stderr).toBe('');
      expect(JSON.parse(pods.stdout)).toMatchObject({ kind: 'PodList', items: [{ metadata: { name: 'web' } }] });
      const health = await h.kubectl(['get', '--raw', '/api/v1/nodes/n1/proxy/healthz'], { minor: MINOR });
      expect(health.stdout).toBe('ok');
      const denied = await h.kubectl(['get', '--raw', '/api/v1/nodes/n1/proxy/pods', '--as', 'jane'], { minor: MINOR });
      expect(denied.stderr).toContain('Forbidden');
    });

    it('refuses a kubelet certificate for another node\'s address (exec, logs, nodes/proxy) in Go\'s words', async () => {
      const refusal = 'tls: failed to verify certificate: x509: certificate is valid for 10.0.0.1, 127.0.0.1, not 10.0.0.2';
      users.length = 0;
      const exec = await h.kubectl(['exec', 'impostor', '--', 'true'], { minor: MINOR });
      expect(exec.code).not.toBe(0);
      expect(exec.stderr).toContain(`error dialing backend: ${refusal}`);
      const logs = await h.kubectl(['logs', 'impostor'], { minor: MINOR });
      expect(logs.code).not.toBe(0);
      expect(logs.stderr).toContain(`Get "https://10.0.0.2:10250/containerLogs/default/impostor/c": ${refusal}`);
      const proxied = await h.kubectl(['get', '--raw', '/api/v1/nodes/n2/proxy/pods'], { minor: MINOR });
      expect(proxied.code).not.toBe(0);
      expect(proxied.stderr).toContain(`error trying to reach service: ${refusal}`);
      // Refused in the handshake: the kubelet never saw a request.
      expect(users).toEqual([]);
      // n1's own address still verifies.
      expect((await h.kubectl(['get', '--raw', '/api/v1/nodes/n1/proxy/healthz'], { minor: MINOR })).stdout).toBe('ok');
    });

    it('answers a pod without a node 400 as upstream', async () => {
      const r = await h.kubectl(['exec', 'nowhere', '--', 'true'], { minor: MINOR });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('pod nowhere does not have a host assigned');
    });
  });
}
