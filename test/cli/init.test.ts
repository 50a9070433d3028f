// `kdp init` (virtual mode): kdp up's runner in kubeadm init's shape — the control plane and its
// own node n1, tainted NoSchedule as kubeadm taints it, and kubeadm's closing message whose join
// line carries the cluster's node token and the pin of its CA; detached (-d) the same message,
// the token reused rather than a second one made; kubeadm's flag names map onto kdp up's.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Node } from '../../src/api/types.js';
import { caCertHash } from '../../src/bootstrap/cluster-info.js';
import { initUpFlags } from '../../src/cli/commands/init.js';
import { main } from '../../src/cli/main.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { buildHttpClient } from '../../src/client/http-client.js';
import { loadKubeconfig } from '../../src/client/kubeconfig.js';
import { captureIO, kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';

const KDP = fileURLToPath(new URL('../../bin/kdp.js', import.meta.url));
const dirs: string[] = [];
const tmp = (p: string) => { const d = mkdtempSync(join(tmpdir(), p)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

/** The join line of kubeadm's message: `kdp node join URL --token T \` then a tab and the pin. */
const JOIN = /^kdp node join (https:\/\/127\.0\.0\.1:\d+) --token ([a-z0-9]{6}\.[a-z0-9]{16}) \\\n\t--discovery-token-ca-cert-hash (sha256:[0-9a-f]{64})$/m;

describe('kdp init', () => {
  it('runs the control plane and its tainted node n1, then prints kubeadm\'s message with a join line that pins the CA', async () => {
    const root = tmp('kdp-init-');
    const paths = dataDirPaths(root);
    const io = captureIO();
    let stop!: () => void;
    const interrupted = new Promise<void>((r) => { stop = r; });
    const running = main(['init', '--virtual', '--apiserver-bind-port', '0', '--time-scale', '10', '--no-dns',
      '--data-dir', root], { ...io, interrupted });
    try {
      await waitFor(async () => io.stdout.includes('Stop with') || undefined,
        60_000, 'kdp init\'s message');
      const m = io.stdout;
      expect(m.split('\n')[0]).toBe('Your Kubernetes control-plane has initialized successfully!');
      expect(m).toContain(`  export KUBECONFIG=${paths.kubeconfig}`);
      expect(m).toContain('  kubectl taint nodes n1 node-role.kubernetes.io/control-plane:NoSchedule-');
      expect(m).toContain('Then you can join any number of worker nodes by running the following on each as root:');
      const [, server, token, pin] = JOIN.exec(m)!;
      const k = loadKubeconfig(paths.kubeconfig);
      expect(pin).toBe(caCertHash(k.caPem!));
      expect(server).toBe(k.server);
      const client = buildHttpClient(k);
      try {
        const nodes = (await client.list<Node>({ group: '', version: 'v1', resource: 'nodes' })).items;
        expect(nodes.map((n) => n.metadata.name)).toEqual(['n1']);
        expect(nodes[0]!.spec?.taints).toContainEqual({ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' });
      } finally {
        client.close();
      }
      const list = await kdp('token', 'list', '--data-dir', root);
      expect(list.out).toContain(token);
    } finally {
      stop();
      expect(await running).toBe(0);
    }
  }, 90_000);

  it('detached (-d) prints the same message, with the node token it made (not a second one)', async () => {
    const root = tmp('kdp-init-d-');
    const r = await new Promise<{ code: number; out: string; err: string }>((resolve) => {
      const p = spawn(process.execPath, [KDP, 'init', '-d', '--virtual', '--port', '0', '--time-scale', '10', '--no-dns',
        '--data-dir', root], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      p.stdout!.on('data', (d: Buffer) => { out += d; });
      p.stderr!.on('data', (d: Buffer) => { err += d; });
      p.on('close', (code) => resolve({ code: code ?? 1, out, err }));
    });
    try {
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain('Your Kubernetes control-plane has initialized successfully!');
      expect(r.out).toContain(`Stop with \`kdp down --data-dir ${root}\`.`);
      const [, , token] = JOIN.exec(r.out)!;
      const rows = (await kdp('token', 'list', '--data-dir', root)).out.trim().split('\n').slice(1);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toContain(token);
    } finally {
      expect((await kdp('down', '--data-dir', root)).code).toBe(0);
    }
  }, 90_000);

  it('takes kubeadm\'s names --pod-network-cidr and --apiserver-bind-port; both spellings at once is an error', () => {
    expect(initUpFlags({ 'pod-network-cidr': '10.32.0.0/16', 'apiserver-bind-port': 7443, port: 6443 }))
      .toMatchObject({ 'cluster-cidr': '10.32.0.0/16', port: 7443, 'control-plane-taint': true });
    expect(() => initUpFlags({ 'pod-network-cidr': '10.32.0.0/16', 'cluster-cidr': '10.40.0.0/16' }))
      .toThrow('--pod-network-cidr and --cluster-cidr: the same setting, give one');
  });
});
