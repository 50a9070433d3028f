// Runs Debian's `prometheus` for `kdp up --prometheus`: its config, credentials and TSDB in
// <data dir>/prometheus, listening on 127.0.0.1 only; stopped (SIGTERM, then SIGKILL) when the
// cluster closes. Without the binary only the config is written. Its pid is kept in
// <dir>/prometheus.pid: one left running by a kdp that died is stopped at the next start, when
// its command line still names this data dir's config (nothing else is ever signalled). The DNS
// pods' file_sd targets are rewritten every scrape interval from `dnsPods` (when they changed).

import { existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { hostSpawner, type HostChild, type Spawner } from '../host/spawn.js';
import { writePrivateFileSync } from '../util/private-files.js';
import { dnsTargets, renderPrometheusConfig } from './prometheus-config.js';

export const PROMETHEUS_BIN = '/usr/bin/prometheus';

export interface PrometheusSetup {
  readonly configFile: string;
  /** http://127.0.0.1:PORT when it runs; undefined when the binary is missing. */
  readonly url?: string;
  close(): Promise<void>;
}

/** Stops the Prometheus a previous kdp left running for this config (pid file + command line). */
export function stopLeftover(pidFile: string, configFile: string): boolean {
  let pid = NaN;
  try { pid = Number(readFileSync(pidFile, 'utf8').trim()); } catch { return false; }
  rmSync(pidFile, { force: true });
  if (!Number.isInteger(pid) || pid <= 1) return false;
  let cmdline = '';
  try { cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch { return false; }
  if (!cmdline.split('\0').includes(`--config.file=${configFile}`)) return false;
  try { process.kill(pid, 'SIGTERM'); return true; } catch { return false; }
}

export function startPrometheus(o: { dataDir: string; apiServer: string; caPem: string; token: string;
  nodes: readonly string[]; intervalSeconds: number; port: number; bin?: string; spawner?: Spawner;
  /** The names of the kube-system DNS pods now. */
  dnsPods(): Promise<readonly string[]> }): PrometheusSetup {
  const dir = join(o.dataDir, 'prometheus');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const caFile = join(dir, 'ca.crt');
  const tokenFile = join(dir, 'token');
  writePrivateFileSync(caFile, o.caPem);
  writePrivateFileSync(tokenFile, o.token);
  const configFile = join(dir, 'prometheus.yml');
  const dnsTargetsFile = join(dir, 'coredns-targets.json');
  writePrivateFileSync(configFile, renderPrometheusConfig({ apiServer: o.apiServer, nodes: o.nodes, caFile, tokenFile,
    dnsTargetsFile, intervalSeconds: o.intervalSeconds }));
  // file_sd reads whole files: written aside, then renamed over.
  const refresh = async () => {
    const text = dnsTargets(o.apiServer, [...await o.dnsPods()].sort());
    let old = '';
    try { old = readFileSync(dnsTargetsFile, 'utf8'); } catch { /* first time */ }
    if (old === text) return;
    writePrivateFileSync(`${dnsTargetsFile}.tmp`, text);
    renameSync(`${dnsTargetsFile}.tmp`, dnsTargetsFile);
  };
  void refresh().catch(() => undefined);
  const timer = setInterval(() => { void refresh().catch(() => undefined); }, Math.max(1, o.intervalSeconds) * 1000);
  timer.unref();
  const bin = o.bin ?? PROMETHEUS_BIN;
  if (!existsSync(bin)) return { configFile, close: async () => { clearInterval(timer); } };
  const pidFile = join(dir, 'prometheus.pid');
  stopLeftover(pidFile, configFile);
  const log = openSync(join(dir, 'prometheus.log'), 'a', 0o600);
  const child: HostChild = (o.spawner ?? hostSpawner).spawn(bin, [`--config.file=${configFile}`, `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${o.port}`, '--storage.tsdb.retention.time=1d'],
  { stdio: ['ignore', log, log] });
  child.on('error', () => undefined);
  if (child.pid) writePrivateFileSync(pidFile, `${child.pid}\n`);
  return {
    configFile, url: `http://127.0.0.1:${o.port}`,
    async close() {
      clearInterval(timer);
      if (child.exitCode !== null || child.signalCode !== null) { rmSync(pidFile, { force: true }); return; }
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(kill);
      rmSync(pidFile, { force: true });
    },
  };
}
