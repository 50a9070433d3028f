import { describe, expect, it } from 'vitest';
import { parseKubeProxyConfiguration } from '../../src/proxy/config.js';
import { buildKubeProxyMetrics } from '../../src/proxy/metrics.js';

const cfg = (extra: string) => `apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n${extra}`;

describe('kube-proxy metrics', () => {
  it('metricsBindAddress defaults to 127.0.0.1:10249 and must be IP:port', () => {
    expect(parseKubeProxyConfiguration(undefined).metricsBindAddress).toEqual({ host: '127.0.0.1', port: 10249 });
    expect(parseKubeProxyConfiguration(cfg('metricsBindAddress: 0.0.0.0:10249\n')).metricsBindAddress)
      .toEqual({ host: '0.0.0.0', port: 10249 });
    expect(parseKubeProxyConfiguration(cfg('metricsBindAddress: "[::1]:9999"\n')).metricsBindAddress)
      .toEqual({ host: '::1', port: 9999 });
    expect(() => parseKubeProxyConfiguration(cfg('metricsBindAddress: localhost\n'))).toThrow(/metricsBindAddress/);
  });

  it('upstream\'s names, types and buckets; partial and full syncs apart; network programming from the trigger time', async () => {
    const m = buildKubeProxyMetrics('nftables');
    m.sync(0.003, true, 1_700_000_000_000);
    m.sync(0.0005, false, 1_700_000_001_000);
    m.syncFailed();
    m.programmed(1_000, 1_600);
    const text = await m.registry.metrics();
    expect(text).toContain('# TYPE kubeproxy_sync_proxy_rules_duration_seconds histogram');
    expect(text).toContain('kubeproxy_sync_proxy_rules_duration_seconds_bucket{le="0.001"} 1');
    expect(text).toContain('kubeproxy_sync_proxy_rules_duration_seconds_count 2');
    expect(text).toContain('kubeproxy_sync_full_proxy_rules_duration_seconds_count 1');
    expect(text).toContain('kubeproxy_sync_partial_proxy_rules_duration_seconds_count 1');
    expect(text).toContain('kubeproxy_sync_proxy_rules_last_timestamp_seconds 1700000001');
    expect(text).toContain('kubeproxy_sync_proxy_rules_nftables_sync_failures_total 1');
    expect(text).toContain('kubeproxy_network_programming_duration_seconds_bucket{le="0.75"} 1');
    expect(text).toContain('kubeproxy_network_programming_duration_seconds_bucket{le="0.5"} 0');
    expect(await buildKubeProxyMetrics('iptables').registry.metrics()).toContain('kubeproxy_sync_proxy_rules_iptables_restore_failures_total 0');
  });
});
