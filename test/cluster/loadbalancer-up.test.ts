// `kdp up` (virtual mode) runs the lab cloud's service controller: kubectl shows an EXTERNAL-IP
// for a LoadBalancer Service; `--cloud-provider none` leaves it <pending>; bad flags are refused
// before anything starts, naming the flag.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { kubectlFor, kubectlMissing } from '../apiserver/helpers/kubectl.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';

describe('kdp up --lb-cidr / --cloud-provider flags', () => {
  it('are checked before anything starts, naming the flag', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-lbflags-'));
    const bad = await kdp('up', '--virtual', '--data-dir', dir, '--lb-cidr', '172.18.255.0/33');
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('--lb-cidr: "172.18.255.0/33" is not a CIDR');
    const cp = await kdp('up', '--virtual', '--data-dir', dir, '--cloud-provider', 'gce');
    expect(cp.err).toContain('--cloud-provider: expected kdp or none, got "gce"');
  });
});

for (const cloudProvider of ['kdp', 'none'] as const) {
  describe.skipIf(kubectlMissing(33))(`kdp up (virtual) with --cloud-provider ${cloudProvider}`, () => {
    const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-lbup-')));
    let cluster: RunningCluster | undefined;
    const kubectl = kubectlFor(paths.kubeconfig, { minor: 33 });
    const externalIP = async () => (await kubectl(['get', 'svc', 'web', '--no-headers'])).out.trim().split(/\s+/)[3];

    beforeAll(async () => {
      cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 20,
        dataPlane: 'virtual', progress: () => {}, dns: false,
        cloud: { cloudProvider, lbCIDR: '192.0.2.8/30' } });
    }, 60_000);
    afterAll(async () => { await cluster?.close(); }, 30_000);

    it(cloudProvider === 'kdp' ? 'kubectl get svc shows an EXTERNAL-IP from --lb-cidr' : 'the Service stays <pending>', async () => {
      expect((await kubectl(['create', 'deployment', 'web', '--image=kdp/echo'])).code).toBe(0);
      expect((await kubectl(['expose', 'deployment', 'web', '--type=LoadBalancer', '--port', '80'])).code).toBe(0);
      if (cloudProvider === 'kdp') {
        expect(await waitFor(async () => (await externalIP()) === '192.0.2.8' || undefined, 20_000)).toBe(true);
      } else {
        await new Promise((r) => setTimeout(r, 500));
        expect(await externalIP()).toBe('<pending>');
      }
    });
  });
}
