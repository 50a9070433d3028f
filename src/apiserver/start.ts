// `kdp apiserver`: opens the embedded store in the data directory, ensures the PKI, bootstraps
// the cluster's initial objects, and listens (HTTPS by default; plain HTTP only when asked, in
// which case every request runs as the admin, as the old insecure port did).

import type { ComponentStatusSource } from './rest/component-status.js';
import type { MetricsApiSource } from '../metrics/api.js';
import type { BackendDialer } from './proxy/backend-dialer.js';
import { apiServiceIP, parseServiceCIDRs } from '../api/service-cidr.js';
import { buildEmbeddedStore } from '../store/index.js';
import { buildEtcdStore, type EtcdStoreOptions } from '../store/etcd-store.js';
import type { StoreBackend } from '../store/types.js';
import type { StoreStartOptions } from '../store/options.js';
import { buildAuthenticator } from './authn/index.js';
import type { AuthorizationMode } from './authz/index.js';
import {
  buildAuthorizer, buildStoreNodeGraph, DEFAULT_AUTHORIZATION_MODE,
} from './authz/index.js';
import { dropLegacyNodeSubjects } from './authz/bootstrap-migrate.js';
import { resourcePrefix } from './rest/keys.js';
import { ADMIN_USER } from './app.js';
import { bootstrapObjects, ensureObjects } from './bootstrap.js';
import type { AdmissionPlugin } from './pipeline-types.js';
import type { HttpLimitOptions } from './options.js';
import { caOf, ensurePki, issueClientCertificate } from './pki/index.js';
import type { Pki } from './pki/index.js';
import { buildDefaultCatalog } from './resources.js';
import { buildStoreRbacSource } from './rbac-source.js';
import type { LogProvider, ServiceDeps } from './rest/deps.js';
import type { ListeningServer } from './serve.js';
import { listenApiServer } from './serve.js';
import { buildAdmission } from './admission-wiring.js';
import { buildServiceAccountTokens, storedCoreObject } from './service-accounts.js';
import { buildBootstrapTokenAuthenticator } from './authn/bootstrap-token.js';
import type { LogIngestSink } from './log-ingest-route.js';

export interface StartApiServerOptions {
  readonly dataDir: string;
  readonly port: number;
  readonly host?: string;
  readonly insecureHttp?: boolean;
  readonly serviceCIDR?: string;
  /** `30000-32767`. */
  readonly nodePortRange?: string;
  readonly authorizationMode?: AuthorizationMode;
  readonly anonymous?: boolean;
  readonly tokenFile?: string;
  /** Address in the `kubernetes` Service's endpoints (default: `host` unless loopback/any). */
  readonly advertiseAddress?: string;
  readonly logProvider?: LogProvider;
  /** How `pods/proxy` and `services/proxy` reach pod addresses (default: none, virtual). */
  readonly backendDialer?: BackendDialer;
  /** Extra admission plugins after the built-in ones. */
  readonly admission?: readonly AdmissionPlugin[];
  /** What `kubectl get componentstatuses` answers (default: probes of the components' ports). */
  readonly componentStatuses?: ComponentStatusSource;
  /** metrics.k8s.io for `kubectl top` (kdp up's collector); absent: not served. */
  readonly metricsApi?: MetricsApiSource;
  /** Upstream's ServiceAccount admission plugin (a pod gets `default` and its token volume);
   *  needs the controller manager's `default` ServiceAccounts. Default off. */
  readonly serviceAccountAdmission?: boolean;
  /** Bounds on receiving requests and on idle connections (default: upstream's, options.ts). */
  readonly httpLimits?: HttpLimitOptions;
  /** Passed to the embedded store: `--repair` and where recovery logs what it changed. */
  readonly store?: StoreStartOptions;
  /** Where node agents' shipped log records go (the cluster's log collector), asked per request. */
  readonly logIngest?: () => LogIngestSink | undefined;
  /** Keep objects in this etcd v3 cluster instead of the embedded store (--etcd-servers). */
  readonly etcd?: EtcdStoreOptions;
}

export interface RunningApiServer {
  readonly url: string;
  readonly port: number;
  readonly pki: Pki;
  readonly server: ListeningServer;
  readonly store: StoreBackend;
  close(): Promise<void>;
}

/** The `kubernetes` Service IP: first usable address of the primary range (IPv4 or IPv6). */
function firstServiceIP(cidr: string): string {
  return apiServiceIP(parseServiceCIDRs(cidr));
}

export async function startApiServer(o: StartApiServerOptions): Promise<RunningApiServer> {
  const serviceCIDR = o.serviceCIDR ?? '10.96.0.0/12';
  const apiServiceIP = firstServiceIP(serviceCIDR);
  const host = o.host ?? '127.0.0.1';
  // In-cluster clients reach the API server as the `kubernetes` Service or its advertised address.
  const pki = await ensurePki(o.dataDir, {
    extraSANs: [`IP:${apiServiceIP}`, ...(o.advertiseAddress ? [`IP:${o.advertiseAddress}`] : [])],
  });
  let deps: ServiceDeps | undefined;
  const saTokens = await buildServiceAccountTokens(pki.dir, () => deps);
  const store = o.etcd ? await buildEtcdStore(o.etcd)
    : await buildEmbeddedStore({ ...o.store, dataDir: o.dataDir });
  const catalog = buildDefaultCatalog();
  const source = buildStoreRbacSource(store, catalog, () => deps);
  const podsResource = catalog.find('', 'v1', 'pods');
  const nodeGraph = podsResource ? buildStoreNodeGraph(store, resourcePrefix(podsResource))
    : undefined;
  const authorizer = buildAuthorizer({ mode: o.authorizationMode ?? DEFAULT_AUTHORIZATION_MODE,
    source, nodeGraph });
  const authenticator = o.insecureHttp ? undefined :
    buildAuthenticator({ tokenFile: o.tokenFile ?? pki.tokenFile, clientCertificates: true,
      serviceAccountTokens: saTokens.authenticate,
      // kubeadm runs kube-apiserver with --enable-bootstrap-token-auth=true.
      bootstrapTokens: buildBootstrapTokenAuthenticator({ getSecret: (ns, name) =>
        storedCoreObject(() => deps)('secrets', ns, name) }) });
  let server: ListeningServer;
  try {
    const admission = [...buildAdmission({ serviceCIDR, nodePortRange: o.nodePortRange,
      catalog, getDeps: () => deps, serviceAccounts: o.serviceAccountAdmission }), ...(o.admission ?? [])];
    server = await listenApiServer({
      store, catalog, authorizer, authenticator, anonymous: o.anonymous ?? !o.insecureHttp,
      ui: { dataDir: o.dataDir },
      admission, logProvider: o.logProvider, backendDialer: o.backendDialer,
      serviceAccountTokens: saTokens.issuer, componentStatuses: o.componentStatuses, metricsApi: o.metricsApi,
      logIngest: o.logIngest,
      kubeletClient: { ...(await issueClientCertificate(caOf(pki), { commonName: 'kube-apiserver-kubelet-client',
        organizations: ['system:masters'] })), caPem: pki.caCertPem }, ...o.httpLimits,
    }, { host, port: o.port, insecureHttp: o.insecureHttp,
      tls: { certPem: pki.serverCertPem, keyPem: pki.serverKeyPem, caPem: pki.caCertPem } });
    deps = server.service.deps;
    const endpointIP = o.advertiseAddress ??
      (/^(127\.|0\.0\.0\.0$|::1?$|localhost$)/.test(host) ? undefined : host);
    await ensureObjects(server.service, { user: ADMIN_USER }, bootstrapObjects({ serviceCIDR,
      apiServiceIP, endpointIP, endpointPort: server.port }));
    await dropLegacyNodeSubjects(server.service, { user: ADMIN_USER });
  } catch (e) {
    source.stop();
    nodeGraph?.stop();
    await store.close();
    throw e;
  }
  return {
    url: server.url, port: server.port, pki, server, store,
    async close() {
      source.stop();
      nodeGraph?.stop();
      await server.close();
      await store.close();
    },
  };
}
