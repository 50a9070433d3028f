// A local etcd cluster for `kdp up --etcd N`, from the machine's etcd binary (Debian's
// etcd-server): N members on loopback with TLS between members and for clients, certificates
// from an etcd CA of their own (kubeadm's layout: pki/etcd/ca.*, a peer certificate per member,
// pki/apiserver-etcd-client.* for the API server), data under <data-dir>/etcd/<member>. The
// layout (names, ports) is kept in <data-dir>/etcd/cluster.json, so a restart (of kdp up, or
// of one member with `kdp etcd start`) finds the same cluster. Each member's pid is in
// <data-dir>/etcd/<member>.pid; stopping kdp up stops them.

import { existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../util/free-port.js';
import { join } from 'node:path';
import { request } from 'node:https';
import { kdpError } from '../errors.js';
import { hostSpawner, runProgram } from '../host/spawn.js';
import { issueCa, issueLeaf, readIfPresent, type CertPair } from '../apiserver/pki/index.js';
import { ensurePrivateDirSync, writePrivateFileSync } from '../util/private-files.js';

export const ETCD_BINARY = '/usr/bin/etcd';
export const ETCDCTL = '/usr/bin/etcdctl';

export interface EtcdMember {
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
}

export interface EtcdLayout {
  readonly members: readonly EtcdMember[];
}

export interface EtcdClientTls {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

export interface LocalEtcd {
  readonly endpoints: readonly string[];
  readonly tls: EtcdClientTls;
  readonly layout: EtcdLayout;
  stop(): Promise<void>;
}

const dirOf = (root: string) => join(root, 'etcd');
const layoutFile = (root: string) => join(dirOf(root), 'cluster.json');
const pidFile = (root: string, m: string) => join(dirOf(root), `${m}.pid`);
export const clientURL = (m: EtcdMember) => `https://127.0.0.1:${m.clientPort}`;
const peerURL = (m: EtcdMember) => `https://127.0.0.1:${m.peerPort}`;

export function readEtcdLayout(root: string): EtcdLayout | undefined {
  try {
    return JSON.parse(readFileSync(layoutFile(root), 'utf8')) as EtcdLayout;
  } catch {
    return undefined;
  }
}

async function pair(dir: string, name: string, make: () => Promise<CertPair>): Promise<CertPair> {
  const certPem = await readIfPresent(join(dir, `${name}.crt`));
  const keyPem = await readIfPresent(join(dir, `${name}.key`));
  if (certPem && keyPem) return { certPem, keyPem };
  const p = await make();
  writePrivateFileSync(join(dir, `${name}.key`), p.keyPem);
  writePrivateFileSync(join(dir, `${name}.crt`), p.certPem);
  return p;
}

/** The etcd CA, a peer certificate per member and the API server's client certificate. */
async function ensureEtcdPki(root: string, members: readonly EtcdMember[]): Promise<EtcdClientTls> {
  const dir = join(root, 'pki', 'etcd');
  ensurePrivateDirSync(dir);
  const ca = await pair(dir, 'ca', () => issueCa('etcd-ca'));
  for (const m of members) {
    await pair(dir, m.name, () => issueLeaf(ca, { commonName: m.name, usage: 'peer',
      sans: ['IP:127.0.0.1', 'DNS:localhost', `DNS:${m.name}`] }));
  }
  const client = await pair(join(root, 'pki'), 'apiserver-etcd-client',
    () => issueLeaf(ca, { commonName: 'kube-apiserver-etcd-client', usage: 'client' }));
  return { ca: Buffer.from(ca.certPem), cert: Buffer.from(client.certPem), key: Buffer.from(client.keyPem) };
}

function memberArgs(root: string, layout: EtcdLayout, m: EtcdMember): string[] {
  const pki = join(root, 'pki', 'etcd');
  const cert = join(pki, `${m.name}.crt`);
  const key = join(pki, `${m.name}.key`);
  const ca = join(pki, 'ca.crt');
  return ['--name', m.name, '--data-dir', join(dirOf(root), m.name),
    '--listen-client-urls', clientURL(m), '--advertise-client-urls', clientURL(m),
    '--listen-peer-urls', peerURL(m), '--initial-advertise-peer-urls', peerURL(m),
    '--initial-cluster', layout.members.map((x) => `${x.name}=${peerURL(x)}`).join(','),
    '--initial-cluster-state', 'new', '--initial-cluster-token', 'kdp-etcd',
    '--cert-file', cert, '--key-file', key, '--trusted-ca-file', ca, '--client-cert-auth',
    '--peer-cert-file', cert, '--peer-key-file', key, '--peer-trusted-ca-file', ca, '--peer-client-cert-auth',
    '--logger', 'zap', '--log-outputs', join(dirOf(root), `${m.name}.log`)];
}

function readIfExists(path: string): string {
  try { return readFileSync(path, 'utf8'); } catch { return ''; }
}

/** Starts one member in the background (its log in etcd/<name>.log); returns its pid. */
export function startEtcdMember(root: string, layout: EtcdLayout, name: string): number {
  const m = layout.members.find((x) => x.name === name);
  if (!m) throw kdpError('KDP_NOT_FOUND', `etcd member ${name} is not one of ${layout.members.map((x) => x.name).join(', ')}`);
  if (!existsSync(ETCD_BINARY)) {
    throw kdpError('KDP_CONFIG', `${ETCD_BINARY} not found: install Debian's etcd-server (apt-get install -y etcd-server)`);
  }
  const out = openSync(join(dirOf(root), `${m.name}.out`), 'a');
  const child = hostSpawner.spawn(ETCD_BINARY, memberArgs(root, layout, m), { stdio: ['ignore', out, out], detached: true });
  child.unref();
  writeFileSync(pidFile(root, m.name), String(child.pid));
  return child.pid!;
}

function memberPid(root: string, name: string): number | undefined {
  try {
    const pid = Number(readFileSync(pidFile(root, name), 'utf8'));
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** Stops one member (SIGKILL with `kill`, as a crash; SIGTERM otherwise); waits for it. */
export async function stopEtcdMember(root: string, name: string, how: 'term' | 'kill' = 'term'): Promise<boolean> {
  const pid = memberPid(root, name);
  if (pid === undefined) return false;
  process.kill(pid, how === 'kill' ? 'SIGKILL' : 'SIGTERM');
  for (let i = 0; i < 100; i++) {
    try { process.kill(pid, 0); } catch { break; }
    await new Promise((r) => setTimeout(r, 50));
  }
  rmSync(pidFile(root, name), { force: true });
  return true;
}

/** GET /health of a member over mutual TLS. */
export function memberHealthy(m: EtcdMember, tls: EtcdClientTls, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: m.clientPort, path: '/health', ca: tls.ca, cert: tls.cert,
      key: tls.key, timeout: timeoutMs }, (res) => {
      let b = '';
      res.on('data', (d) => { b += d; });
      res.on('end', () => resolve(res.statusCode === 200 && /"health":\s*"true"/.test(b)));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => { req.destroy(); resolve(false); });
    req.end();
  });
}

/**
 * Starts (or restarts) the local cluster of `size` members; resolves once a quorum is healthy.
 * A data dir that already has a cluster of another size is an error (members cannot be added
 * this way).
 */
export async function startLocalEtcd(root: string, size: number, log: (l: string) => void,
  o: { readonly pickPort?: () => Promise<number> } = {}): Promise<LocalEtcd> {
  if (![1, 3, 5].includes(size)) throw kdpError('KDP_CONFIG', `--etcd: ${size} members; use 1, 3 or 5 (an odd number keeps a majority)`);
  if (!existsSync(ETCD_BINARY)) {
    throw kdpError('KDP_CONFIG', `--etcd: ${ETCD_BINARY} not found; install Debian's etcd-server (apt-get install -y etcd-server)`);
  }
  ensurePrivateDirSync(dirOf(root));
  let layout = readEtcdLayout(root);
  if (layout && layout.members.length !== size) {
    throw kdpError('KDP_CONFIG', `--etcd ${size}: this data directory holds a ${layout.members.length}-member etcd cluster`);
  }
  const pick = o.pickPort ?? freePort;
  // A fresh cluster's ports are picked free, but another process may bind one before etcd does:
  // then that member exits with "address already in use", and a cluster with no data yet is
  // started again on new ports (at most 3 times). A cluster with data keeps its ports (its
  // members know each other by them).
  let fresh = !layout;
  for (let attempt = 1; ; attempt++) {
    if (!layout) {
      const members: EtcdMember[] = [];
      for (let i = 0; i < size; i++) members.push({ name: `etcd-${i}`, clientPort: await pick(), peerPort: await pick() });
      layout = { members };
      writePrivateFileSync(layoutFile(root), `${JSON.stringify(layout, null, 2)}\n`);
    }
    const tls = await ensureEtcdPki(root, layout.members);
    for (const m of layout.members) {
      if (memberPid(root, m.name) === undefined) {
        // A fresh member's logs start empty, so an earlier attempt's bind error is not read again.
        if (fresh) for (const f of [`${m.name}.out`, `${m.name}.log`]) rmSync(join(dirOf(root), f), { force: true });
        startEtcdMember(root, layout, m.name);
      }
    }
    const quorum = Math.floor(size / 2) + 1;
    const deadline = Date.now() + 30_000;
    let portTaken = false;
    for (;;) {
      const healthy = (await Promise.all(layout.members.map((m) => memberHealthy(m, tls)))).filter(Boolean).length;
      if (healthy >= quorum) break;
      portTaken = fresh && layout.members.some((m) => memberPid(root, m.name) === undefined &&
        [`${m.name}.out`, `${m.name}.log`].some((f) => /address already in use/.test(readIfExists(join(dirOf(root), f)))));
      if (portTaken) break;
      if (Date.now() > deadline) {
        throw kdpError('KDP_UNAVAILABLE', `etcd: ${healthy} of ${size} members healthy after 30 s (logs in ${dirOf(root)})`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!portTaken) break;
    if (attempt >= 3) throw kdpError('KDP_UNAVAILABLE', `etcd: a member's port was taken by another process ${attempt} times`);
    log(`etcd: a member's port was taken before it bound it; starting the new cluster on other ports`);
    for (const m of layout.members) {
      await stopEtcdMember(root, m.name, 'kill');
      rmSync(join(dirOf(root), m.name), { recursive: true, force: true });
    }
    layout = undefined;
    fresh = true;
  }
  const l = layout!;
  log(`etcd: ${size} member(s) on ${l.members.map((m) => clientURL(m)).join(', ')} (TLS)`);
  const tls = await ensureEtcdPki(root, l.members);
  return {
    endpoints: l.members.map(clientURL), tls, layout: l,
    async stop() {
      for (const m of l.members) await stopEtcdMember(root, m.name);
    },
  };
}

/** The seed's quorum table: members, quorum, failures tolerated. */
export function quorumTable(size: number): string {
  const rows = [1, 3, 5, 7].map((n) => `${n === size ? '→' : ' '} ${n} member(s): quorum ${Math.floor(n / 2) + 1}, ` +
    `tolerates ${n - (Math.floor(n / 2) + 1)} failure(s)`);
  return rows.join('\n');
}

const run = async (file: string, args: readonly string[]): Promise<string> => {
  const r = await runProgram(hostSpawner, file, args, { env: { ...process.env, ETCDCTL_API: '3' }, timeoutMs: 60_000 });
  if (r.code === 0) return r.stdout;
  const why = r.timedOut ? 'timed out' : r.stderr.trim() || `exit ${r.code ?? r.signal}`;
  throw kdpError('KDP_HOST_EXEC', `${file} ${args[0]} ${args[1] ?? ''} failed: ${why}`);
};

/** `etcdctl snapshot save` from a healthy member of the local cluster into `file`. */
export async function saveEtcdSnapshot(root: string, file: string): Promise<string> {
  const layout = readEtcdLayout(root);
  if (!layout) throw kdpError('KDP_NOT_FOUND', `no local etcd cluster in ${root}`);
  if (!existsSync(ETCDCTL)) throw kdpError('KDP_CONFIG', `${ETCDCTL} not found: install Debian's etcd-client`);
  const pki = join(root, 'pki');
  const tls = { ca: readFileSync(join(pki, 'etcd', 'ca.crt')), cert: readFileSync(join(pki, 'apiserver-etcd-client.crt')),
    key: readFileSync(join(pki, 'apiserver-etcd-client.key')) };
  let member: EtcdMember | undefined;
  for (const m of layout.members) if (await memberHealthy(m, tls)) { member = m; break; }
  if (!member) throw kdpError('KDP_UNAVAILABLE', 'no etcd member is healthy: nothing to snapshot');
  await run(ETCDCTL, ['snapshot', 'save', file, '--endpoints', clientURL(member), '--cacert', join(pki, 'etcd', 'ca.crt'),
    '--cert', join(pki, 'apiserver-etcd-client.crt'), '--key', join(pki, 'apiserver-etcd-client.key')]);
  return member.name;
}

/** Restores `file` into a new data dir as a fresh `size`-member cluster (`kdp up --etcd size
 *  --data-dir root` then starts it). */
export async function restoreEtcdSnapshot(file: string, root: string, size: number): Promise<EtcdLayout> {
  if (![1, 3, 5].includes(size)) throw kdpError('KDP_CONFIG', `--etcd: ${size} members; use 1, 3 or 5`);
  if (!existsSync(file)) throw kdpError('KDP_NOT_FOUND', `snapshot ${file} not found`);
  if (readEtcdLayout(root)) throw kdpError('KDP_CONFIG', `${root} already holds an etcd cluster: restore into a new data directory`);
  if (!existsSync(ETCDCTL)) throw kdpError('KDP_CONFIG', `${ETCDCTL} not found: install Debian's etcd-client`);
  ensurePrivateDirSync(dirOf(root));
  const members: EtcdMember[] = [];
  for (let i = 0; i < size; i++) members.push({ name: `etcd-${i}`, clientPort: await freePort(), peerPort: await freePort() });
  const layout: EtcdLayout = { members };
  const initial = members.map((x) => `${x.name}=${peerURL(x)}`).join(',');
  for (const m of members) {
    await run(ETCDCTL, ['snapshot', 'restore', file, '--name', m.name, '--data-dir', join(dirOf(root), m.name),
      '--initial-cluster', initial, '--initial-advertise-peer-urls', peerURL(m), '--initial-cluster-token', 'kdp-etcd']);
  }
  writePrivateFileSync(layoutFile(root), `${JSON.stringify(layout, null, 2)}\n`);
  return layout;
}
