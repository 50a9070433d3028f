// The API server's /metrics with the real kubectl: upstream's names and labels, accepted by
// promtool, and authorised like any non-resource URL.

import { spawn } from 'node:child_process';
import { get as httpsGet } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestVerb } from '../../src/apiserver/metrics.js';
import { kubectlMissing, startKubectlHarness, type KubectlHarness } from './helpers/kubectl.js';

const MINOR = 33;

describe('metrics verbs', () => {
  it('as upstream: LIST, GET, WATCH, APPLY, CONNECT', () => {
    expect(requestVerb('GET', undefined, '/api/v1/pods', undefined, undefined)).toBe('LIST');
    expect(requestVerb('GET', 'p', '/api/v1/namespaces/d/pods/p', undefined, undefined)).toBe('GET');
    expect(requestVerb('GET', undefined, '/api/v1/pods?watch=true', undefined, undefined)).toBe('WATCH');
    expect(requestVerb('PATCH', 'p', '/x', 'application/apply-patch+yaml', undefined)).toBe('APPLY');
    expect(requestVerb('POST', 'p', '/x', undefined, 'exec')).toBe('CONNECT');
    expect(requestVerb('DELETE', 'p', '/x', undefined, undefined)).toBe('DELETE');
  });
});

describe.skipIf(kubectlMissing(MINOR))('API server /metrics', () => {
  let h: KubectlHarness;
  beforeAll(async () => { h = await startKubectlHarness(); });
  afterAll(async () => { await h?.close(); });

  it('counts requests by verb, resource, scope and code; promtool accepts the output', async () => {
    await h.kubectl(['get', 'pods', '-n', 'default'], { minor: MINOR });
    await h.kubectl(['get', 'pod', 'nope', '-n', 'default'], { minor: MINOR });
    const r = await h.kubectl(['get', '--raw', '/metrics'], { minor: MINOR });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('# TYPE apiserver_request_total counter');
    expect(r.stdout).toMatch(/apiserver_request_total\{verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver",code="200"\} [1-9]/);
    expect(r.stdout).toMatch(/apiserver_request_total\{verb="GET",dry_run="",group="",version="v1",resource="pods",subresource="",scope="resource",component="apiserver",code="404"\} 1/);
    expect(r.stdout).toMatch(/apiserver_request_duration_seconds_bucket\{le="0.005",verb="LIST"/);
    const check = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const p = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      p.stdout.on('data', (d) => { out += d; });
      p.stderr.on('data', (d) => { out += d; });
      p.on('close', (code) => resolve({ code, out }));
      p.stdin.end(r.stdout);
    });
    expect(check).toEqual({ code: 0, out: '' });
  });

  it('an anonymous caller is refused, as for any non-resource URL', async () => {
    const code = await new Promise<number | undefined>((resolve, reject) => {
      httpsGet(`${h.server.url}/metrics`, { ca: h.server.pki.caCertPem }, (res) => { res.resume(); resolve(res.statusCode); })
        .on('error', reject);
    });
    expect(code).toBe(403);
  });
});
