// The image table: Docker's entrypoint/cmd rules over kdp's stand-ins, and the container env.
import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/types.js';
import { imageKind, parseImage, resolveImage } from '../../src/kubelet/images.js';
import { containerEnv, expandVars } from '../../src/kubelet/container-env.js';

const echo = { file: '/bin/echo-prog', args: ['--x'] };
const run = (c: Partial<Container>, runDns = false) => resolveImage({ name: 'c', ...c }, { echo, runDns, binDir: '/b' });

describe('images', () => {
  it('parses references as Docker does', () => {
    expect(parseImage('busybox')).toEqual({ registry: 'docker.io', path: 'busybox', tag: 'latest' });
    expect(parseImage('docker.io/library/nginx:1.27@sha256:ab')).toEqual({ registry: 'docker.io', path: 'nginx', tag: '1.27' });
    expect(parseImage('localhost:5000/x/y')).toEqual({ registry: 'localhost:5000', path: 'x/y', tag: 'latest' });
    expect(imageKind('registry.k8s.io/e2e-test-images/agnhost:2.52')).toBe('agnhost');
    expect(imageKind('registry.k8s.io/pause:3.10')).toBe('pause');
    expect(imageKind('kdp/echo')).toBe('echo');
    expect(imageKind('kdp/dns:1')).toBe('dns');
    expect(imageKind('nginx:1.27')).toBe('web');
    expect(imageKind('alpine:3')).toBe('shell');
    expect(imageKind('example.com/app')).toBe('unknown');
  });

  it('command replaces the entrypoint and drops cmd; args replace cmd', () => {
    expect(run({ image: 'busybox', command: ['sh', '-c', 'echo hi'] })).toEqual({ file: 'sh', args: ['-c', 'echo hi'] });
    expect(run({ image: 'busybox', command: ['sh'], args: ['-c', 'x'] })).toEqual({ file: 'sh', args: ['-c', 'x'] });
    expect(run({ image: 'busybox', args: ['sleep', '5'] })).toEqual({ file: 'sleep', args: ['5'] });
    expect(run({ image: 'busybox' })).toEqual({ file: 'sh', args: [] });
    expect(run({ image: 'debian' })).toEqual({ file: 'bash', args: [] });
    expect(run({ image: 'kdp/echo', ports: [{ containerPort: 80 }] }))
      .toEqual({ file: '/bin/echo-prog', args: ['--x'], env: { KDP_ECHO_PORTS: '80/TCP' } });
  });

  it('maps image binaries to kdp programs', () => {
    const ag = run({ image: 'registry.k8s.io/e2e-test-images/agnhost:2.52', args: ['netexec', '--http-port=8080'] });
    expect(ag.file).toBe(process.execPath);
    expect(ag.args.slice(-3)).toEqual(['/b/kdp-agnhost.js', 'netexec', '--http-port=8080']);
    const ag2 = run({ image: 'registry.k8s.io/e2e-test-images/agnhost:2.52', command: ['/agnhost', 'serve-hostname'] });
    expect(ag2.args.slice(-2)).toEqual(['/b/kdp-agnhost.js', 'serve-hostname']);
    expect(run({ image: 'registry.k8s.io/e2e-test-images/agnhost:2.52', args: ['mounttest'] }).warning)
      .toContain('mounttest is not emulated');
    expect(run({ image: 'registry.k8s.io/pause:3.10' }).args.slice(-1)).toEqual(['/b/kdp-pause.js']);
    const web = run({ image: 'nginx:1.27', ports: [{ containerPort: 8080 }] });
    expect(web.env).toEqual({ KDP_WEB_FLAVOR: 'nginx', KDP_WEB_PORTS: '8080', KDP_WEB_VERSION: '1.27' });
    expect(run({ image: 'kdp/dns', args: ['-conf', '/etc/coredns/Corefile'] }, true))
      .toEqual({ file: process.execPath, args: ['/b/kdp-dns.js', '-conf', '/etc/coredns/Corefile'] });
    expect(run({ image: 'kdp/dns', args: ['-conf', 'x'] }, false).file).toBe('/bin/echo-prog');
  });

  it('an unknown image runs its args, or the echo, with a warning', () => {
    expect(run({ image: 'example.com/app', args: ['ls'] })).toMatchObject({ file: 'ls', args: [] });
    expect(run({ image: 'example.com/app', args: ['ls'] }).warning).toContain('example.com/app');
    const e = run({ image: 'example.com/app' });
    expect(e.file).toBe('/bin/echo-prog');
    expect(e.warning).toContain('running the kdp/echo workload');
  });
});

describe('container env', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns1', uid: 'u-1', labels: { app: 'a' } },
    spec: { nodeName: 'n1', containers: [] } } as unknown as Pod;
  const data: Record<string, Record<string, string>> = {
    'configmaps/cm': { A: '1', B: '2' }, 'secrets/s': { PW: Buffer.from('secret').toString('base64') } };
  const ctx = { podIPs: ['10.244.0.5', 'fd00::5'], hostIPs: ['192.168.0.2'], nodeName: 'n1',
    lookup: async (r: string, n: string) => data[`${r}/${n}`] };

  it('envFrom, then env in order with $(VAR) expansion and downward fields', async () => {
    const env = await containerEnv(pod, { name: 'c', envFrom: [{ configMapRef: { name: 'cm' }, prefix: 'CM_' }],
      env: [
        { name: 'X', value: 'x-$(CM_A)-$(NOPE)-$$(CM_A)' },
        { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
        { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: 'IPS', valueFrom: { fieldRef: { fieldPath: 'status.podIPs' } } },
        { name: 'HOST', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
        { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
        { name: 'PW', valueFrom: { secretKeyRef: { name: 's', key: 'PW' } } },
        { name: 'OPT', valueFrom: { configMapKeyRef: { name: 'gone', key: 'k', optional: true } } },
        { name: 'CM_A', value: 'over' },
      ] }, ctx);
    expect(Object.fromEntries(env)).toEqual({ CM_A: 'over', CM_B: '2', X: 'x-1-$(NOPE)-$(CM_A)', POD: 'p', NS: 'ns1',
      UID: 'u-1', IP: '10.244.0.5', IPS: '10.244.0.5,fd00::5', HOST: '192.168.0.2', NODE: 'n1', APP: 'a', PW: 'secret' });
  });

  it('a missing required source names it', async () => {
    await expect(containerEnv(pod, { name: 'c', env: [{ name: 'K', valueFrom: { configMapKeyRef: { name: 'cm', key: 'Z' } } }] }, ctx))
      .rejects.toThrow("couldn't find key Z in configmap ns1/cm");
    await expect(containerEnv(pod, { name: 'c', envFrom: [{ secretRef: { name: 'nope' } }] }, ctx))
      .rejects.toThrow('secret "nope" not found');
    expect(expandVars('$(A)$', new Map([['A', 'a']]))).toBe('a$');
  });
});
