import { describe, expect, it } from 'vitest';
import type { Pod, Toleration } from '../../../src/api/types.js';
import { buildDefaultTolerationSecondsPlugin } from '../../../src/apiserver/admission/index.js';
import type { AdmissionRequest } from '../../../src/apiserver/pipeline-types.js';

function admitPod(pod: Pod, more: Partial<AdmissionRequest> = {}): Promise<Pod> {
  const plugin = buildDefaultTolerationSecondsPlugin();
  const req: AdmissionRequest = { operation: 'CREATE', group: '', version: 'v1',
    resource: 'pods', object: pod, user: { name: 'u', groups: [] }, dryRun: false, ...more };
  return plugin.admit!(req).then(() => pod);
}

const pod = (tolerations?: Toleration[]): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' },
  spec: { containers: [{ name: 'c', image: 'i' }], ...(tolerations ? { tolerations } : {}) } });

const NOT_READY = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute',
  tolerationSeconds: 300 };
const UNREACHABLE = { ...NOT_READY, key: 'node.kubernetes.io/unreachable' };

describe('DefaultTolerationSeconds', () => {
  it('adds not-ready and unreachable NoExecute tolerations of 300 s to a new pod', async () => {
    expect((await admitPod(pod())).spec!.tolerations).toEqual([NOT_READY, UNREACHABLE]);
  });

  it('keeps an existing toleration for a taint and adds only the missing one', async () => {
    const own = { key: 'node.kubernetes.io/not-ready', operator: 'Exists' as const,
      effect: 'NoExecute' as const, tolerationSeconds: 10 };
    expect((await admitPod(pod([own]))).spec!.tolerations).toEqual([own, UNREACHABLE]);
  });

  it('treats an empty key with an empty effect as tolerating everything', async () => {
    const all = { operator: 'Exists' as const };
    expect((await admitPod(pod([all]))).spec!.tolerations).toEqual([all]);
  });

  it('leaves subresources and other resources alone', async () => {
    expect((await admitPod(pod(), { subresource: 'status' })).spec!.tolerations).toBeUndefined();
    expect((await admitPod(pod(), { resource: 'services' })).spec!.tolerations).toBeUndefined();
  });
});
