// The CertificateSigningRequest resource and the queue both CSR controllers run on (upstream's
// certificates.CertificateController: every add and update is looked at; a failure is retried
// with back-off by the queue).

import type { CertificateSigningRequest } from '../../api/certificates.js';
import type { ControllerContext } from '../options.js';
import { buildQueueController, type QueueController } from '../runner.js';

export const CSRS = { group: 'certificates.k8s.io', version: 'v1', resource: 'certificatesigningrequests' } as const;

export function buildCsrController(ctx: ControllerContext, name: string,
  handle: (csr: CertificateSigningRequest) => Promise<void>): QueueController {
  const inf = ctx.informers.informerFor<CertificateSigningRequest>(CSRS);
  const c = buildQueueController(name, 1, async (key) => {
    const csr = inf.cache.getByName(undefined, key);
    if (csr) await handle(structuredClone(csr));
  });
  inf.addEventHandler({ onAdd: (x) => c.queue.add(x.metadata.name!), onUpdate: (_, x) => c.queue.add(x.metadata.name!) });
  return c;
}
