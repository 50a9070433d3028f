// pods/{name}/ephemeralcontainers as upstream serves it: the one way to add a container to a
// running pod (`kubectl debug`), only adding, never changing or removing.

import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlMissing, startKubectlHarness, type KubectlHarness } from './helpers/kubectl.js';

const skip = kubectlMissing(33);

describe.skipIf(skip)('ephemeral containers', () => {
  let h: KubectlHarness;
  /** One request to the harness's server, trusting its CA; answers status and parsed body. */
  const api = (method: string, path: string, body?: unknown,
    type = 'application/strategic-merge-patch+json'): Promise<{ status: number; json: any }> =>
    new Promise((resolve, reject) => {
      const req = request(`${h.server.url}${path}`, {
        method, ca: h.server.pki.caCertPem,
        headers: { authorization: `Bearer ${h.server.pki.adminToken}`, 'content-type': type },
      }, (res) => {
        let text = '';
        res.on('data', (d) => { text += d; });
        res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  beforeAll(async () => {
    h = await startKubectlHarness();
    const r = await h.kubectl(['run', 'p1', '--image=kdp/echo'], { minor: 33 });
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(async () => {
    await h?.close();
  });
  const EPH = '/api/v1/namespaces/default/pods/p1/ephemeralcontainers';

  it('kubectl debug adds a debugger container (no panic, no NotFound)', async () => {
    const r = await h.kubectl(['debug', 'p1', '--image=busybox', '--container=dbg', '--profile=general'],
      { minor: 33 });
    expect(r.code, r.stderr).toBe(0);
    const pod = JSON.parse((await h.kubectl(['get', 'pod', 'p1', '-o', 'json'], { minor: 33 })).stdout);
    expect(pod.spec.ephemeralContainers).toMatchObject([{ name: 'dbg', image: 'busybox' }]);
    expect(pod.spec.containers).toHaveLength(1);
  });

  it('GET answers the Pod; changing or removing an ephemeral container is refused', async () => {
    const got = (await api('GET', EPH)).json as { kind: string };
    expect(got.kind).toBe('Pod');
    const change = await api('PATCH', EPH, { spec: { ephemeralContainers: [{ name: 'dbg', image: 'alpine' }] } });
    expect(change.status).toBe(422);
    expect((change.json as { message: string }).message)
      .toContain('existing ephemeral containers "dbg" may not be changed');
  });

  it('refuses ports, probes and names that clash, naming the field', async () => {
    const r = await api('PATCH', EPH, { spec: { ephemeralContainers: [
      { name: 'dbg', image: 'busybox' },
      { name: 'p1', image: 'busybox', ports: [{ containerPort: 80 }] },
    ] } });
    expect(r.status).toBe(422);
    const st = r.json as { details: { causes: Array<{ field: string; message: string }> } };
    expect(st.details.causes).toEqual(expect.arrayContaining([
      expect.objectContaining({ field: 'spec.ephemeralContainers[1].name', message: 'Duplicate value: "p1"' }),
      expect.objectContaining({ field: 'spec.ephemeralContainers[1].ports',
        message: 'Forbidden: cannot be set for an Ephemeral Container' }),
    ]));
  });

  it('an update of the pod itself cannot add one', async () => {
    const r = await api('PATCH', '/api/v1/namespaces/default/pods/p1',
      { spec: { ephemeralContainers: [{ name: 'dbg', image: 'busybox' }, { name: 'x', image: 'busybox' }] } });
    expect(r.status).toBe(422);
  });

  it('a 404 for an unknown subresource carries details, as upstream (kubectl relies on it)', async () => {
    const r = await api('GET', '/api/v1/namespaces/default/pods/p1/nosuch');
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ reason: 'NotFound', details: {} });
  });
});
