// `kdp logs`: the cluster's kept logs (src/logging) as one time-ordered stream across pods,
// nodes and components — including pods already deleted and clusters already stopped, since it
// reads the log store in the data dir, not the kubelets. `--component kubelet --node n1` is
// what `journalctl -u kubelet` is on a node.

import { existsSync } from 'node:fs';
import { resolveDataDir } from '../../cluster/data-dir.js';
import { kdpError } from '../../errors.js';
import { logStoreDir } from '../../logging/collector.js';
import { readLogs, readNewLogs } from '../../logging/log-reader.js';
import { buildLogQuery } from '../../logging/query.js';
import { formatTime, type LogRecord } from '../../logging/record.js';
import type { Command } from '../command.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';

const FOLLOW_POLL_MS = 200;
const OUT_BLOCK = 64 * 1024;

/** `TIME NODE SOURCE: MESSAGE`; a container is `ns/pod/container`, a component its name. */
export function formatLogLine(r: LogRecord): string {
  const s = r.source;
  const who = s.kind === 'container' ? `${s.namespace}/${s.pod}/${s.container}` : s.component;
  return `${formatTime(r.time)} ${s.node || '-'} ${who}: ${r.message}\n`;
}

export function formatLogJson(r: LogRecord): string {
  const { source, stream, message } = r;
  return `${JSON.stringify({ time: formatTime(r.time), source, stream, message })}\n`;
}

export const logsCommand: Command = {
  name: 'logs',
  summary: 'kept logs of containers (deleted pods too) and components, one time-ordered stream',
  flags: [
    { name: 'selector', short: 'l', type: 'string', help: 'pods whose labels (when first seen) match, e.g. app=web' },
    { name: 'namespace', short: 'n', type: 'string', help: 'pods of this namespace (default "default")' },
    { name: 'all-namespaces', short: 'A', type: 'boolean', default: false, help: 'pods of every namespace' },
    { name: 'pod', type: 'string', help: 'only this pod (by name)' },
    { name: 'container', short: 'c', type: 'string', help: 'only this container' },
    { name: 'component', type: 'string',
      help: 'component lines instead of pods: apiserver, scheduler, controller-manager, kubelet, ' +
        'kube-proxy, dns, etcd (comma-separated)' },
    { name: 'node', type: 'string', help: 'only lines from this node' },
    { name: 'since', type: 'string', help: 'only lines newer than this duration, e.g. 10m, 1h30m' },
    { name: 'since-time', type: 'string', help: 'only lines at or after this RFC 3339 time' },
    { name: 'grep', type: 'string',
      help: 'only lines whose message matches this regular expression ((?i) at the start: ignore case)' },
    { name: 'follow', short: 'f', type: 'boolean', default: false, help: 'keep printing new lines until interrupted' },
    { name: 'output', short: 'o', type: 'string', help: 'json: one JSON object per line' },
    DATA_DIR_FLAG,
  ],
  async run(args, io) {
    const f = args.flags;
    const output = f.output as string | undefined;
    if (output !== undefined && output !== 'json') {
      throw kdpError('KDP_CONFIG', `--output: "${output}" is not supported (json)`);
    }
    if (args.positionals.length) {
      throw kdpError('KDP_CONFIG', `unexpected argument "${args.positionals[0]}" (a pod is --pod NAME)`);
    }
    if (f.namespace !== undefined && f['all-namespaces']) {
      throw kdpError('KDP_CONFIG', '-n/--namespace: cannot be combined with -A');
    }
    const query = buildLogQuery({
      namespace: f.namespace as string | undefined, allNamespaces: f['all-namespaces'] as boolean,
      selector: f.selector as string | undefined, pod: f.pod as string | undefined,
      container: f.container as string | undefined, component: f.component as string | undefined,
      node: f.node as string | undefined, since: f.since as string | undefined,
      sinceTime: f['since-time'] as string | undefined, grep: f.grep as string | undefined,
    });
    const dataDir = resolveDataDir(f['data-dir'] as string | undefined, io.env);
    const dir = logStoreDir(dataDir);
    if (!existsSync(dir)) {
      throw kdpError('KDP_NOT_RUNNING', `no cluster logs in ${dataDir} (kdp up keeps them in ${dir})`);
    }
    // Lines are written in blocks: one write per line costs a system call each.
    const format = output === 'json' ? formatLogJson : formatLogLine;
    let pending = '';
    const print = (r: LogRecord) => {
      pending += format(r);
      if (pending.length >= OUT_BLOCK) { io.out(pending); pending = ''; }
    };
    const flush = () => { if (pending) io.out(pending); pending = ''; };
    const cursor = readLogs(dir, query, print);
    flush();
    if (!f.follow) return 0;
    let stop = false;
    void io.interrupted.then(() => { stop = true; });
    while (!stop) {
      await new Promise((r) => setTimeout(r, FOLLOW_POLL_MS));
      readNewLogs(dir, query, cursor, print);
      flush();
    }
    return 0;
  },
};
