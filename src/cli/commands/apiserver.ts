// `kdp apiserver`: the API server alone (for labs that run components as separate processes).

import { parseAuthorizationModes } from '../../apiserver/authz/index.js';
import { dataDirPaths, ensureDataDir, resolveDataDir } from '../../cluster/data-dir.js';
import { writePrivateFileSync } from '../../util/private-files.js';
import { renderKubeconfig } from '../../client/kubeconfig.js';
import type { Command } from '../command.js';
import { kdpError } from '../../errors.js';
import type { DataDirPaths } from '../../cluster/data-dir.js';
import type { RunningApiServer } from '../../apiserver/start.js';
import type { LogCollection } from '../../logging/collector.js';

const ADMISSION_PLUGINS = ['ServiceAccount', 'KdpPodNetns'];

function withCompactionLog<T extends object>(etcd: T | undefined, log: (line: string) => void) {
  return etcd && { ...etcd, onCompactionError: (e: unknown) => log(`etcd compaction: ${(e as Error).message}`) };
}

async function netnsAnnotation(paths: DataDirPaths) {
  const [{ buildNetnsAnnotationPlugin }, { hostPrefixFor }] = await Promise.all([
    import('../../cluster/netns-annotation.js'), import('../../cluster/data-plane-netns.js')]);
  return buildNetnsAnnotationPlugin(hostPrefixFor(paths));
}

/** The netns cluster of the data dir, as `kdp up`'s API server reaches it: dials from inside the
 *  pod's node namespace (any node's, n1, for an address without one). */
async function netnsReach(paths: DataDirPaths) {
  const [{ netnsSockets }, { netnsBackendDialer }, { hostPrefixFor }] = await Promise.all([
    import('../../host/netns-socket.js'), import('../../cluster/netns-reach.js'), import('../../cluster/data-plane-netns.js')]);
  const prefix = hostPrefixFor(paths);
  const sockets = netnsSockets();
  return { dialer: netnsBackendDialer(sockets, { nodeNetns: (n) => `${prefix}-${n}` }, () => 'n1'), close: () => sockets.close() };
}
import { DATA_DIR_FLAG, ETCD_FLAGS, etcdOptions, REPAIR_FLAG } from '../shared-flags.js';

/**
 * The API server's part in cluster-level logging. Alone (no `kdp up`, no other collector in the
 * data dir), it runs the collector, as the control plane's host runs the logging backend: the
 * store gets its requests, the Events, every node's pods and the other processes' component
 * files. A replica of `kdp up --apiservers`, or beside a collector, writes its request lines to
 * its own component file, which that collector reads.
 */
async function apiserverLogs(dataDir: string, server: RunningApiServer, supervised: boolean,
  log: (line: string) => void, ingest: { sink?: LogCollection['ingest'] }): Promise<{ stop(): void }> {
  const [{ collectorPid, startLogCollection }, { logApiRequests }, { componentLog }] = await Promise.all([
    import('../../logging/collector.js'), import('../../logging/component-lines.js'),
    import('../../logging/component-spool.js')]);
  const http = server.server.app.server;
  if (supervised || collectorPid(dataDir) !== undefined) {
    const file = componentLog(dataDir, 'apiserver');
    const off = logApiRequests(http, (m) => file.line(m));
    return { stop: () => { off(); file.close(); } };
  }
  const [{ buildInProcessClient }, { buildInformerFactory }, { ADMIN_USER }] = await Promise.all([
    import('../../client/in-process.js'), import('../../client/informer.js'), import('../../apiserver/app.js')]);
  const informers = buildInformerFactory(buildInProcessClient(server.server.service, ADMIN_USER));
  const logs = startLogCollection({ dataDir, informers, apiServer: http,
    onError: (e) => log(`logs: ${(e as Error).message}`) });
  informers.start();
  ingest.sink = logs.ingest;
  return { stop: () => { ingest.sink = undefined; logs.stop(); informers.stop(); } };
}

/** kubeadm's cluster-info (kube-public) for this server, so `kdp node join` discovers a split
 *  cluster too: its address as served (`--bind-address`), signed per token by the bootstrapsigner
 *  of `kdp controller-manager`; tokens come from `kdp token create`. */
async function publishClusterInfo(server: RunningApiServer): Promise<void> {
  const [{ buildInProcessClient }, { ADMIN_USER }, { ensureClusterInfo }] = await Promise.all([
    import('../../client/in-process.js'), import('../../apiserver/app.js'), import('../../bootstrap/token-store.js')]);
  await ensureClusterInfo(buildInProcessClient(server.server.service, ADMIN_USER), server.url, server.pki.caCertPem);
}

export const apiserverCommand: Command = {
  name: 'apiserver',
  summary: 'run the Kubernetes API server alone (HTTPS on 127.0.0.1, embedded durable store or --etcd-servers)',
  flags: [
    { name: 'port', type: 'number', default: 6443, help: 'port (0: any free port)' },
    { name: 'bind-address', type: 'string', default: '127.0.0.1', help: 'address to listen on' },
    { name: 'insecure-http', type: 'boolean', default: false, help: 'plain HTTP, every request as admin (tests only)' },
    { name: 'service-cluster-ip-range', type: 'string', default: '10.96.0.0/12', help: 'Service CIDR' },
    { name: 'service-node-port-range', type: 'string', default: '30000-32767', help: 'NodePort range' },
    { name: 'authorization-mode', type: 'string', default: 'Node,RBAC', help: 'comma-separated, in order: Node, RBAC, AlwaysAllow' },
    { name: 'anonymous-auth', type: 'boolean', default: true, help: 'allow unauthenticated requests (as system:anonymous)' },
    { name: 'token-auth-file', type: 'string', help: 'bearer tokens, upstream CSV format (default: the generated one)' },
    { name: 'enable-admission-plugins', type: 'string', help: 'admission plugins beyond the defaults, comma-separated: ServiceAccount, KdpPodNetns' },
    { name: 'netns-cluster', type: 'boolean', default: false, help: 'reach pods and kubelets inside the netns cluster of --data-dir (its node namespaces)' },
    { name: 'supervised', type: 'boolean', default: false, help: 'run under kdp up (--apiservers): exit when stdin closes, write no kubeconfig' },
    { name: 'store', type: 'string', help: 'embedded (default) | etcd (with --etcd-servers; --etcd-servers alone implies it)' },
    ...ETCD_FLAGS,
    DATA_DIR_FLAG,
    REPAIR_FLAG,
  ],
  async run(args, io) {
    const paths = dataDirPaths(resolveDataDir(args.flags['data-dir'] as string | undefined, io.env));
    const mode = String(args.flags['authorization-mode']);
    parseAuthorizationModes(mode);
    const log = (line: string) => io.err(`kdp: ${line}\n`);
    await ensureDataDir(paths.root, log);
    const { startApiServer } = await import('../../apiserver/start.js');
    const plugins = String(args.flags['enable-admission-plugins'] ?? '').split(',').map((x) => x.trim()).filter(Boolean);
    for (const p of plugins) {
      if (!ADMISSION_PLUGINS.includes(p)) {
        throw kdpError('KDP_CONFIG', `--enable-admission-plugins: ${p} is not one of ${ADMISSION_PLUGINS.join(', ')}`);
      }
    }
    const store = args.flags.store as string | undefined;
    if (store !== undefined && store !== 'embedded' && store !== 'etcd') {
      throw kdpError('KDP_CONFIG', `--store: ${JSON.stringify(store)} is not embedded or etcd`);
    }
    if (store === 'etcd' && !args.flags['etcd-servers']) throw kdpError('KDP_CONFIG', '--store etcd needs --etcd-servers URL,…');
    if (store === 'embedded' && args.flags['etcd-servers']) {
      throw kdpError('KDP_CONFIG', '--store embedded and --etcd-servers contradict each other');
    }
    const reach = args.flags['netns-cluster'] ? await netnsReach(paths) : undefined;
    // Joined nodes' shipped log records, once this server runs the collector (apiserverLogs).
    const ingest: { sink?: LogCollection['ingest'] } = {};
    const server = await startApiServer({
      logIngest: () => ingest.sink,
      dataDir: paths.root, port: args.flags.port as number, host: args.flags['bind-address'] as string,
      insecureHttp: args.flags['insecure-http'] as boolean, serviceCIDR: args.flags['service-cluster-ip-range'] as string,
      nodePortRange: args.flags['service-node-port-range'] as string, authorizationMode: mode,
      anonymous: args.flags['anonymous-auth'] as boolean, tokenFile: args.flags['token-auth-file'] as string | undefined,
      store: { repair: args.flags.repair as boolean, log }, etcd: withCompactionLog(etcdOptions(args.flags), log),
      serviceAccountAdmission: plugins.includes('ServiceAccount'),
      admission: plugins.includes('KdpPodNetns') ? [await netnsAnnotation(paths)] : [],
      backendDialer: reach?.dialer,
    });
    const supervised = args.flags.supervised as boolean;
    if (!supervised && !args.flags['insecure-http']) await publishClusterInfo(server);
    const logs = await apiserverLogs(paths.root, server, supervised, log, ingest);
    if (!supervised) {
      // Atomic: a reader that waits for the file to appear must not read half of it.
      writePrivateFileSync(paths.kubeconfig, renderKubeconfig({
        server: server.url, ...(args.flags['insecure-http'] ? {} : { caPem: server.pki.caCertPem, token: server.pki.adminToken }),
      }), { atomic: true });
    }
    io.out(`kdp apiserver listening on ${server.url}\n${supervised ? '' : `  export KUBECONFIG=${paths.kubeconfig}\n`}`);
    // Supervised: the supervisor holds our stdin; its end (the supervisor is gone) ends us too.
    const orphaned = supervised ? new Promise<void>((resolve) => {
      process.stdin.on('end', resolve).on('close', resolve).on('error', () => resolve());
      process.stdin.resume();
    }) : new Promise<void>(() => undefined);
    await Promise.race([io.interrupted, orphaned]);
    logs.stop();
    await server.close();
    reach?.close();
    return 0;
  },
};
