// `kdp rules compile` refuses every input object the API server would refuse, naming the file,
// document and field, with exit status 2 and nothing printed — never a stack trace (exit 70),
// never a rule built from an unchecked field.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kdp } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'kdp-compile-in-'));

function manifest(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const SERVICE_HEAD = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: 10.96.0.10
  selector: {app: web}
`;

const SLICE = `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: default, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: "", port: 8080, protocol: TCP}]
endpoints: [{addresses: ["10.244.0.5"], conditions: {ready: true}}]
`;

async function compile(file: string, ...extra: string[]) {
  return kdp('rules', 'compile', '-f', file, '--mode', 'iptables', ...extra);
}

function expectInputError(r: { code: number; out: string; err: string }, re: RegExp): void {
  expect(r.code, r.err).toBe(2);
  expect(r.out).toBe('');
  expect(r.err).toMatch(/^error \[KDP_INPUT\]/);
  expect(r.err).toMatch(re);
  expect(r.err).not.toMatch(/internal error|\n\s+at /);
}

describe('kdp rules compile: input objects are checked as the API server checks them', () => {
  it('refuses ports given as an object instead of a list, naming the document', async () => {
    const r = await compile(manifest('ports.yaml', `${SERVICE_HEAD}  ports: {port: 80}\n`));
    expectInputError(r, /ports\.yaml: document 1: Service default\/web: .*spec\.ports: json: /);
  });

  it('refuses EndpointSlice endpoints given as a number, naming the document', async () => {
    const text = SERVICE_HEAD + '  ports: [{port: 80}]\n' +
      SLICE.replace(/endpoints: .*/, 'endpoints: 5');
    const r = await compile(manifest('eps.yaml', text));
    expectInputError(r, /eps\.yaml: document 2: EndpointSlice default\/web-1: .*endpoints: json: /);
  });

  it('refuses a YAML alias bomb instead of expanding it', async () => {
    const rows = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (const [prev, name] of [['a', 'b'], ['b', 'c'], ['c', 'd'], ['d', 'e'], ['e', 'f'],
      ['f', 'g'], ['g', 'h']]) {
      rows.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const text = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n` +
      rows.map((l) => `  ${l}`).join('\n') + '\n';
    const r = await compile(manifest('bomb.yaml', text));
    expectInputError(r, /bomb\.yaml: document 1: YAML aliases expand too much/);
  });

  it('refuses an affinity timeout that is not a number (no --seconds abc is emitted)', async () => {
    const text = `${SERVICE_HEAD}  ports: [{port: 80}]\n  sessionAffinity: ClientIP\n` +
      `  sessionAffinityConfig: {clientIP: {timeoutSeconds: "abc"}}\n${SLICE}`;
    const r = await compile(manifest('affinity.yaml', text));
    expectInputError(r, /spec\.sessionAffinityConfig\.clientIP\.timeoutSeconds: json: /);
  });

  it('refuses a nodePort that is not a port number (no --dport 99999 is emitted)', async () => {
    const text = `${SERVICE_HEAD}  type: NodePort\n  ports: [{port: 80, nodePort: 99999}]\n` +
      SLICE;
    const r = await compile(manifest('nodeport.yaml', text));
    expectInputError(r, /document 1: .*spec\.ports\[0\]\.nodePort: Invalid value: 99999/);
  });

  it('refuses a bad load-balancer ingress address instead of dropping it', async () => {
    const text = `${SERVICE_HEAD}  type: LoadBalancer\n  ports: [{port: 80}]\n` +
      `status: {loadBalancer: {ingress: [{ip: 999.1.1.1}]}}\n${SLICE}`;
    const r = await compile(manifest('lb.yaml', text));
    expectInputError(r, /status\.loadBalancer\.ingress\[0\]\.ip: Invalid value: "999\.1\.1\.1"/);
  });

  it('still compiles a valid load-balancer ingress address', async () => {
    const text = `${SERVICE_HEAD}  type: LoadBalancer\n  ports: [{port: 80}]\n` +
      `status: {loadBalancer: {ingress: [{ip: 192.0.2.10}]}}\n${SLICE}`;
    const r = await compile(manifest('lb-ok.yaml', text));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('-d 192.0.2.10 --dport 80 -j KUBE-EXT-');
  });

  it('refuses a --pod-cidr that is not a CIDR with exit status 2', async () => {
    const file = manifest('ok.yaml', `${SERVICE_HEAD}  ports: [{port: 80}]\n${SLICE}`);
    const r = await compile(file, '--pod-cidr', '10.244.999.0/24');
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/KDP_CONFIG.*--pod-cidr: "10\.244\.999\.0\/24" is not a CIDR/);
  });

  it('answers exit status 2 for a manifest file that cannot be read', async () => {
    const r = await compile(join(dir, 'missing.yaml'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/KDP_INPUT.*missing\.yaml: cannot read/);
  });
});
