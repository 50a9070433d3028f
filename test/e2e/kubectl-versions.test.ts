// Older and newer kubectl builds against kdp: discovery, tables, create and apply.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlMissing, startKubectlHarness } from '../apiserver/helpers/kubectl.js';
import type { KubectlHarness } from '../apiserver/helpers/kubectl.js';

const CM = `apiVersion: v1
kind: ConfigMap
metadata: {name: NAME}
data: {a: "1"}
`;

for (const minor of [27, 33]) {
  describe.skipIf(kubectlMissing(minor))(`kubectl 1.${minor} against kdp`, () => {
    let h: KubectlHarness;
    const ok = async (...args: string[]) => {
      const r = await h.kubectl(args, { minor });
      expect(r.stderr, `kubectl ${args.join(' ')}`).not.toMatch(/error/i);
      expect(r.code).toBe(0);
      return r.stdout;
    };
    beforeAll(async () => { h = await startKubectlHarness(); });
    afterAll(async () => { await h?.close(); });

    it('gets tables through discovery', async () => {
      expect(await ok('get', 'ns')).toMatch(/^kube-system\s+Active\s+\S+$/m);
    });

    it('creates a deployment and applies a manifest', async () => {
      expect(await ok('create', 'deployment', 'd', '--image=nginx')).toContain('created');
      // 1.27/1.28 validate with OpenAPI v2 (protobuf), 1.29+ with v3.
      const f = await h.file(`cm-${minor}.yaml`, CM.replace('NAME', `cm${minor}`));
      expect(await ok('apply', '-f', f)).toContain('created');
      await h.file(`cm-${minor}.yaml`, CM.replace('NAME', `cm${minor}`).replace('"1"', '"2"'));
      expect(await ok('apply', '-f', f)).toContain('configured');
      expect(await ok('get', 'deploy', 'd', '-o', 'wide'))
        .toMatch(/^d\s+0\/1\s+0\s+0\s+\S+\s+nginx\s+nginx\s+app=d$/m);
    });
  });
}
