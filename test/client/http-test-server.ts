// A real API server for the HTTP client tests, over TLS with this repo's PKI, token and client
// certificate authentication, RBAC with the bootstrap policy, and kdp's admission plugins,
// on a memory store. Built from parts (not startApiServer) so only what these tests need runs.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildObjectSource } from '../../src/apiserver/admission-wiring.js';
import { buildAdmissionPlugins } from '../../src/apiserver/admission/index.js';
import { buildAuthenticator } from '../../src/apiserver/authn/index.js';
import {
  bootstrapRbacObjects, buildAuthorizer, type RbacResource,
} from '../../src/apiserver/authz/index.js';
import { ensurePki, type Pki } from '../../src/apiserver/pki/index.js';
import { buildDefaultCatalog } from '../../src/apiserver/resources.js';
import type { ServiceDeps } from '../../src/apiserver/rest/deps.js';
import { listObjects } from '../../src/apiserver/rest/read.js';
import { listenApiServer, type ListeningServer } from '../../src/apiserver/serve.js';
import { buildHttpClient } from '../../src/client/http-client.js';
import { buildMemoryStore } from '../../src/store/index.js';

export interface SecureApi {
  readonly url: string;
  readonly pki: Pki;
  readonly server: ListeningServer;
  close(): Promise<void>;
}

/** Extra token-file lines (`token,user,uid,"groups"`) are added after the admin's. */
export async function startSecureApi(dir: string, extraTokens: string[] = []): Promise<SecureApi> {
  const pki = await ensurePki(dir);
  const tokenFile = join(dir, 'tokens.csv');
  await writeFile(tokenFile, [`${pki.adminToken},kubernetes-admin,admin,"system:masters"`,
    ...extraTokens, ''].join('\n'));
  const store = buildMemoryStore();
  const catalog = buildDefaultCatalog();
  let deps: ServiceDeps | undefined;
  const rbac = {
    async list(resource: RbacResource, namespace?: string) {
      const r = catalog.find('rbac.authorization.k8s.io', 'v1', resource);
      return r && deps ? (await listObjects(deps, r, namespace, {})).items : [];
    },
  };
  const server = await listenApiServer({
    store, catalog, anonymous: true,
    authenticator: buildAuthenticator({ tokenFile, clientCertificates: true }),
    authorizer: buildAuthorizer({ mode: 'RBAC', source: rbac }),
    admission: buildAdmissionPlugins({ serviceCIDRs: ['10.96.0.0/12'],
      source: buildObjectSource(catalog, () => deps) }),
  }, { port: 0, tls: { certPem: pki.serverCertPem, keyPem: pki.serverKeyPem,
    caPem: pki.caCertPem } });
  deps = server.service.deps;
  const admin = buildHttpClient({ server: server.url, caPem: pki.caCertPem,
    token: pki.adminToken });
  try {
    await admin.create({ group: '', version: 'v1', resource: 'namespaces' },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    await admin.create({ group: '', version: 'v1', resource: 'namespaces' },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } });
    for (const o of bootstrapRbacObjects()) {
      const r = catalog.all.find((c) => c.kind === o.kind && `${c.group ? `${c.group}/` : ''}${c.version}` === o.apiVersion);
      if (!r) throw new Error(`no resource serves ${o.apiVersion} ${o.kind}`);
      await admin.create({ group: r.group, version: r.version, resource: r.resource,
        ...(r.namespaced ? { namespace: o.metadata?.namespace } : {}) }, o);
    }
  } finally {
    admin.close();
  }
  return {
    url: server.url, pki, server,
    async close() {
      await server.close();
      await store.close();
    },
  };
}
