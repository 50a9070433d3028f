import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RULES_DIR } from '../helpers/scenarios.js';
import { compileScenario, diffTexts } from './helpers.js';

const golden = (s: string, m: string) => readFileSync(join(RULES_DIR, s, `${m}.golden`), 'utf8');

describe('behaviour diff', () => {
  it('finds one endpoint\'s probability change that the text diff buries in noise', () => {
    const a = golden('17-partial-sync', 'iptables');
    const noisy = a.replace(/\[0:0\]/g, '[12:3456]')
      .replace('--probability 0.5000000000', '--probability 0.2500000000');
    expect(diffTexts(a, noisy, 'rules').text.split('\n').length).toBeGreaterThan(10);
    const out = diffTexts(a, noisy, 'behaviour');
    expect(out.status).toBe(1);
    expect(out.text).toContain('pod 10.244.0.5 → ClusterIP 10.96.17.1:80/tcp\n' +
      '  before: → 10.244.1.1:8080 p=0.500000, → 10.244.1.2:8080 p=0.500000\n' +
      '  after:  → 10.244.1.1:8080 p=0.250000, → 10.244.1.2:8080 p=0.750000\n');
    expect(out.text).toContain('3 of 3 probes behave differently');
  });

  it('reports iptables and nftables tables of the same scenario as equivalent', () => {
    const out = diffTexts(golden('01-clusterip', 'iptables'), golden('01-clusterip', 'nftables'),
      'behaviour');
    expect(out).toEqual({
      text: 'the tables differ in text but not in behaviour (3 probes)\n', status: 0,
    });
  });

  it('ipvs state and iptables of the same scenario are equivalent too', () => {
    const out = diffTexts(golden('01-clusterip', 'iptables'), golden('01-clusterip', 'ipvs'),
      'behaviour');
    expect(out.status).toBe(0);
  });

  it('iptables and nftables of a NodePort scenario behave the same', () => {
    const out = diffTexts(golden('04-nodeport', 'iptables'), golden('04-nodeport', 'nftables'),
      'behaviour');
    expect(out.status).toBe(0);
  });

  it('shows the documented mode difference (reference §7.1) only where it appears', () => {
    // A node reaching an external IP with no local meaning: iptables leaves it alone,
    // nftables rejects it (flows.yaml `modes:` override of 06-external-ips).
    const out = diffTexts(golden('06-external-ips', 'iptables'), golden('06-external-ips', 'nftables'),
      'behaviour');
    expect(out.text).toBe('node 172.18.0.2 → external IP 192.0.2.12:80/tcp\n' +
      '  before: untouched p=1.000000\n  after:  REJECT p=1.000000\n' +
      '1 of 15 probes behave differently\n');
  });

  it('scaling a Service changes the flows to it and to nothing else', async () => {
    const a = await compileScenario('17-partial-sync', 'iptables', undefined, '1-add');
    const b = await compileScenario('17-partial-sync', 'nftables', undefined, '2-scale');
    const out = diffTexts(a, b, 'behaviour');
    expect(out.text).toContain('→ 10.244.1.3:8080 p=0.333333');
    expect(out.text).not.toContain('10.96.17.2');
    expect(out.text).toContain('3 of 6 probes behave differently');
  });
});
