// Without a metrics source the API server serves no metrics.k8s.io (nor APIServices), and the
// real kubectl says so as it does against a cluster without metrics-server.

import { describe, expect, it } from 'vitest';
import { kubectlMissing, startKubectlHarness } from '../apiserver/helpers/kubectl.js';

describe.each([27, 33])('kubectl 1.%i top without a metrics API', (minor) => {
  it.skipIf(kubectlMissing(minor))('answers "Metrics API not available"', async () => {
    const h = await startKubectlHarness();
    try {
      for (const what of ['nodes', 'pods']) {
        const r = await h.kubectl(['top', what], { minor });
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain('error: Metrics API not available');
      }
      expect((await h.kubectl(['api-versions'], { minor })).stdout).not.toContain('metrics.k8s.io');
    } finally {
      await h.close();
    }
  }, 60_000);
});
