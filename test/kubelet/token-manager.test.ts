// The kubelet's token manager: a pod's projected token is reused until its refresh time (80 % of
// its life), then requested anew — so the periodic volume sync does not rewrite it every minute.

import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import type { Client } from '../../src/client/types.js';
import { requestPodToken } from '../../src/kubelet/projected.js';

describe('requestPodToken', () => {
  it('reuses a token until 80 % of its life, then asks again; another pod gets its own', async () => {
    let now = Date.parse('2026-12-04T08:00:00Z');
    let issued = 0;
    const client = {
      create: async (_r: unknown, body: { spec: { expirationSeconds: number } }) => {
        issued++;
        return { status: { token: `t${issued}`, expirationTimestamp: new Date(now + body.spec.expirationSeconds * 1000).toISOString() } };
      },
    } as unknown as Client;
    const pod = (uid: string) => ({ metadata: { name: 'p', namespace: 'default', uid }, spec: { containers: [] } }) as unknown as Pod;
    const deps = { client, now: () => now };
    expect((await requestPodToken(deps, pod('u1'), { expirationSeconds: 3600 })).token).toBe('t1');
    now += 60_000;
    expect((await requestPodToken(deps, pod('u1'), { expirationSeconds: 3600 })).token).toBe('t1');
    expect((await requestPodToken(deps, pod('u2'), { expirationSeconds: 3600 })).token).toBe('t2');
    now += 0.8 * 3600_000; // past the refresh time of t1
    expect((await requestPodToken(deps, pod('u1'), { expirationSeconds: 3600 })).token).toBe('t3');
    expect(issued).toBe(3);
  });
});
