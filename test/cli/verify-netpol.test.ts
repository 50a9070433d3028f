import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../../src/cli/command.js';
import { parsePortTargets, runVerifyNetpol } from '../../src/cli/commands/verify-netpol.js';
import type { Client } from '../../src/client/types.js';
import { ADMIN_USER } from '../../src/apiserver/app.js';
import { loadObjectsFromText } from '../../src/api/load.js';
import { buildInProcessClient } from '../../src/client/in-process.js';
import { buildTestServer } from '../apiserver/helpers/server.js';
import { kdp } from '../helpers/cli.js';

const FILE = join(__dirname, '../../rules/netpol/01-xyz-mixed/objects.yaml');

function io(): CliIO & { text: () => string } {
  let buf = '';
  return { out: (t) => { buf += t; }, err: () => undefined, env: {}, isTTY: false,
    interrupted: new Promise(() => undefined), text: () => buf };
}
const noClient = (): Client => { throw new Error('no cluster in this test'); };

describe('kdp verify --netpol', () => {
  it('prints the upstream truth table per port from a manifest (-f)', async () => {
    const o = io();
    expect(await runVerifyNetpol({ netpol: true, filename: FILE, ports: '80/TCP' }, o, noClient))
      .toBe(0);
    const lines = o.text().split('\n');
    expect(lines[0]).toBe('TCP/80 (9 pods, 4 policies, 6 classes, 36 evaluations):');
    expect(lines[1]).toBe('-\tx/a\tx/b\tx/c\ty/a\ty/b\ty/c\tz/a\tz/b\tz/c');
    // x/a admits only y/b (AND peer) on TCP 80-81; x/b, x/c admit nobody (deny-ingress);
    // z pods send nothing (egress lockdown); y/a sends only to DNS and x's serve-81-tcp.
    expect(lines[2]).toBe('x/a\tX\tX\tX\t.\t.\t.\t.\t.\t.');
    expect(lines[6]).toBe('y/b\t.\tX\tX\t.\t.\t.\t.\t.\t.');
    expect(lines[5]).toBe('y/a\tX\tX\tX\tX\tX\tX\tX\tX\tX');
    expect(lines[8]).toBe('z/a\tX\tX\tX\tX\tX\tX\tX\tX\tX');
  });
  it('-o json gives the matrix as data', async () => {
    const o = io();
    await runVerifyNetpol({ filename: FILE, ports: '81/TCP', output: 'json' }, o, noClient);
    const j = JSON.parse(o.text());
    expect(j.policies).toBe(4);
    expect(j.tables[0]).toMatchObject({ port: 81, protocol: 'TCP' });
    const cell = (f: string, t: string): boolean =>
      j.tables[0].values[j.tables[0].pods.indexOf(f)][j.tables[0].pods.indexOf(t)];
    expect(cell('y/a', 'x/a')).toBe(false); // y/a's egress allows it; x/a admits only y/b
    expect(cell('y/b', 'x/a')).toBe(true); // endPort 80-81
  });
  it('a manifest with an invalid policy is KDP_INPUT naming the file and field', async () => {
    const bad = join(tmpdir(), `kdp-netpol-bad-${process.pid}.yaml`);
    writeFileSync(bad, 'apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n'
      + 'metadata: {name: p, namespace: default}\nspec:\n  podSelector: {}\n'
      + '  ingress: [{ports: [{port: 9, endPort: 8}]}]\n');
    try {
      await expect(runVerifyNetpol({ filename: bad }, io(), noClient)).rejects.toMatchObject({
        code: 'KDP_INPUT', message: expect.stringContaining('spec.ingress[0].ports[0].endPort: '
          + 'Invalid value: 8: must be greater than or equal to `port`') });
    } finally {
      rmSync(bad, { force: true });
    }
  });
  it('bad --ports values name the flag', () => {
    expect(() => parsePortTargets('80/ICMP')).toThrow(/--ports: "80\/ICMP"/);
    expect(parsePortTargets('80,53/udp')).toEqual([{ port: 80, protocol: 'TCP' },
      { port: 53, protocol: 'UDP' }]);
  });
  it('`kdp verify --netpol -f` runs through the command table', async () => {
    const r = await kdp('verify', '--netpol', '-f', FILE, '--ports', '81/TCP');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^TCP\/81 \(9 pods, 4 policies, /);
  });
  it("reads the cluster's current objects through the API when no -f is given", async () => {
    const s = await buildTestServer();
    try {
      const c = buildInProcessClient(s.service, ADMIN_USER);
      for (const { object: o } of loadObjectsFromText(readFileSync(FILE, 'utf8'), FILE)) {
        const ns = (o.metadata as { namespace?: string }).namespace;
        const [group, version] = o.apiVersion!.includes('/') ? o.apiVersion!.split('/')
          : ['', o.apiVersion!];
        const resource = `${o.kind!.toLowerCase().replace(/y$/, 'ie')}s`;
        if (o.kind === 'Namespace' || o.kind === 'Node') {
          await c.create({ group: group!, version: version!, resource }, o);
        } else {
          const ref = { group: group!, version: version!, resource, namespace: ns };
          await c.create(ref, o);
          // A create drops status (as upstream); the kubelet's status write gives pods IPs.
          if (o.kind === 'Pod') {
            await c.patch(ref, o.metadata!.name!, 'merge', { status: o.status },
              { subresource: 'status' });
          }
        }
      }
      const fromFile = io();
      await runVerifyNetpol({ filename: FILE, ports: '80/TCP' }, fromFile, noClient);
      const fromApi = io();
      await runVerifyNetpol({ ports: '80/TCP' }, fromApi, () => c);
      expect(fromApi.text()).toBe(fromFile.text());
      expect(fromApi.text().split('\n')[0]).toMatch(/^TCP\/80 \(9 pods, 4 policies, /);
    } finally {
      await s.done();
    }
  });
});
