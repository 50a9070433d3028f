// `kdp crictl --node N pods|ps|images|inspectp|inspect|logs|exec …`: what a node's container
// runtime holds, asked of the node's runtime endpoint (the unix socket each node agent serves,
// src/kubelet/runtime-endpoint), never of the API server — with crictl's columns, formats and
// ID prefixes, and IDs that match `containerStatuses[].containerID` (`kdp://<id>`).

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { resolveDataDir } from '../../cluster/data-dir.js';
import { kdpError } from '../../errors.js';
import type { CliIO, Command } from '../command.js';
import type { FlagValues } from '../flags.js';
import { DATA_DIR_FLAG } from '../shared-flags.js';
import { runtimeEndpointPath, RUNTIME_SOCKET_NAME } from '../../kubelet/runtime-endpoint/listen.js';
import type { RuntimeEndpointClient } from '../../kubelet/runtime-endpoint/client.js';
import type { CriContainer, CriImage, CriPodSandbox } from '../../kubelet/runtime-endpoint/cri-view.js';
import { createdAgo, humanSize, sortedJson, table, truncatedId } from './crictl-format.js';

const USAGE = 'usage: kdp crictl --node NODE pods | ps [-a] | images | inspectp POD | inspect CONTAINER | ' +
  'logs [-f] [--tail N] CONTAINER | exec [-i] [-t] CONTAINER CMD...';

const NODE_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** The socket to talk to: --runtime-endpoint, else the node's in the data dir. */
export function endpointPath(flags: FlagValues, env: Readonly<Record<string, string | undefined>>): string {
  const given = flags['runtime-endpoint'] as string | undefined;
  if (given) return given.replace(/^unix:\/\//, '');
  const node = flags.node as string | undefined;
  if (!node) throw kdpError('KDP_CONFIG', '--node: the node whose runtime to ask is required (or --runtime-endpoint)');
  if (!NODE_NAME.test(node)) throw kdpError('KDP_CONFIG', `--node: "${node}" is not a node name`);
  const dataDir = resolveDataDir(flags['data-dir'] as string | undefined, env);
  const path = runtimeEndpointPath(dataDir, node);
  if (existsSync(path)) return path;
  let known: string[] = [];
  try {
    known = readdirSync(join(dataDir, 'nodes')).filter((n) => existsSync(join(dataDir, 'nodes', n, RUNTIME_SOCKET_NAME)));
  } catch { /* no nodes dir */ }
  throw kdpError('KDP_NOT_FOUND', `node ${node}: no runtime endpoint at ${path} ` +
    `(${known.length ? `nodes with one in ${dataDir}: ${known.sort().join(', ')}` : `no running node in ${dataDir}`})`);
}

function regex(flags: FlagValues, name: string): RegExp | undefined {
  const v = flags[name] as string | undefined;
  if (!v) return undefined;
  try { return new RegExp(v); } catch (e) { throw kdpError('KDP_CONFIG', `--${name}: ${(e as Error).message}`); }
}

function labels(flags: FlagValues): Record<string, string> | undefined {
  const list = flags.label as string[] | undefined;
  if (!list?.length) return undefined;
  return Object.fromEntries(list.map((l) => {
    const i = l.indexOf('=');
    if (i <= 0) throw kdpError('KDP_CONFIG', `--label: "${l}" is not key=value`);
    return [l.slice(0, i), l.slice(i + 1)];
  }));
}

function output(flags: FlagValues, allowed: readonly string[]): string {
  const o = (flags.output as string | undefined) ?? allowed[0]!;
  if (!allowed.includes(o)) throw kdpError('KDP_CONFIG', `--output: "${o}" is not one of ${allowed.join(', ')}`);
  return o;
}

const one = (args: readonly string[], what: string): string => {
  if (args.length !== 1) throw kdpError('KDP_CONFIG', `expected one ${what} ID (or its prefix), got ${args.length}`);
  return args[0]!;
};

async function pods(c: RuntimeEndpointClient, flags: FlagValues, io: CliIO): Promise<number> {
  const out = output(flags, ['table', 'json']);
  const state = flags.state as string | undefined;
  if (state && !['ready', 'notready'].includes(state.toLowerCase())) {
    throw kdpError('KDP_CONFIG', '--state should be ready or notready');
  }
  const filter = { ...(state ? { state: state.toLowerCase() === 'ready' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY' } : {}),
    ...(labels(flags) ? { labelSelector: labels(flags) } : {}), ...(flags.id ? { id: flags.id } : {}) };
  const name = regex(flags, 'name');
  const ns = regex(flags, 'namespace');
  const items = (await c.call<{ items: CriPodSandbox[] }>('runtime.v1.RuntimeService/ListPodSandbox', { filter })).items
    .filter((p) => (!name || name.test(p.metadata.name)) && (!ns || ns.test(p.metadata.namespace)));
  if (out === 'json') { io.out(`${JSON.stringify({ items }, null, 2)}\n`); return 0; }
  if (flags.quiet) { io.out(items.map((p) => `${p.id}\n`).join('')); return 0; }
  const trunc = (id: string) => (flags['no-trunc'] ? id : truncatedId(id));
  io.out(table([['POD ID', 'CREATED', 'STATE', 'NAME', 'NAMESPACE', 'ATTEMPT', 'RUNTIME'],
    ...items.map((p) => [trunc(p.id), createdAgo(p.createdAt), p.state === 'SANDBOX_READY' ? 'Ready' : 'NotReady',
      p.metadata.name, p.metadata.namespace, String(p.metadata.attempt), p.runtimeHandler || '(default)'])]));
  return 0;
}

const CONTAINER_STATES: Record<string, string> = { created: 'CONTAINER_CREATED', running: 'CONTAINER_RUNNING',
  exited: 'CONTAINER_EXITED', unknown: 'CONTAINER_UNKNOWN' };

async function ps(c: RuntimeEndpointClient, flags: FlagValues, io: CliIO): Promise<number> {
  const out = output(flags, ['table', 'json']);
  const state = (flags.state as string | undefined)?.toLowerCase();
  if (state && !CONTAINER_STATES[state]) {
    throw kdpError('KDP_CONFIG', '--state should be one of created, running, exited or unknown');
  }
  // crictl: without -a (or --state) only running containers.
  const st = state ? CONTAINER_STATES[state] : flags.all ? undefined : 'CONTAINER_RUNNING';
  const filter = { ...(st ? { state: st } : {}), ...(flags.pod ? { podSandboxId: flags.pod } : {}),
    ...(flags.id ? { id: flags.id } : {}), ...(labels(flags) ? { labelSelector: labels(flags) } : {}) };
  const name = regex(flags, 'name');
  const ns = regex(flags, 'namespace');
  const items = (await c.call<{ containers: CriContainer[] }>('runtime.v1.RuntimeService/ListContainers', { filter }))
    .containers.filter((x) => (!name || name.test(x.metadata.name))
      && (!ns || ns.test(x.labels['io.kubernetes.pod.namespace'] ?? '')));
  if (out === 'json') { io.out(`${JSON.stringify({ containers: items }, null, 2)}\n`); return 0; }
  if (flags.quiet) { io.out(items.map((x) => `${x.id}\n`).join('')); return 0; }
  const noTrunc = !!flags['no-trunc'];
  const stateName = (s: string) => s.replace(/^CONTAINER_/, '').toLowerCase().replace(/^./, (ch) => ch.toUpperCase());
  io.out(table([['CONTAINER', 'IMAGE', 'CREATED', 'STATE', 'NAME', 'ATTEMPT', 'POD ID', 'POD', 'NAMESPACE'],
    ...items.map((x) => [noTrunc ? x.id : truncatedId(x.id), noTrunc ? x.image.image : truncatedId(x.image.image, 'sha256:'),
      createdAgo(x.createdAt), stateName(x.state), x.metadata.name, String(x.metadata.attempt),
      noTrunc ? x.podSandboxId : truncatedId(x.podSandboxId), x.labels['io.kubernetes.pod.name'] ?? '',
      x.labels['io.kubernetes.pod.namespace'] ?? ''])]));
  return 0;
}

async function images(c: RuntimeEndpointClient, flags: FlagValues, io: CliIO): Promise<number> {
  const out = output(flags, ['table', 'json']);
  const r = await c.call<{ images: CriImage[] }>('runtime.v1.ImageService/ListImages', { filter: {} });
  if (out === 'json') { io.out(`${JSON.stringify(r, null, 2)}\n`); return 0; }
  if (flags.quiet) { io.out(r.images.map((i) => `${i.id}\n`).join('')); return 0; }
  const rows = r.images.flatMap((i) => (i.repoTags.length ? i.repoTags : ['<none>:<none>']).map((t) => {
    const at = t.lastIndexOf(':');
    return [t.slice(0, at), t.slice(at + 1), flags['no-trunc'] ? i.id : truncatedId(i.id, 'sha256:'),
      humanSize(Number(i.size))];
  }));
  io.out(table([['IMAGE', 'TAG', 'IMAGE ID', 'SIZE'], ...rows]));
  return 0;
}

async function logs(c: RuntimeEndpointClient, flags: FlagValues, args: readonly string[], io: CliIO): Promise<number> {
  const id = one(args, 'container');
  const tail = flags.tail as number | undefined;
  if (tail !== undefined && (!Number.isInteger(tail) || tail < -1)) {
    throw kdpError('KDP_CONFIG', `--tail: ${tail} is not a line count (-1 for all)`);
  }
  let done = false;
  const follow = c.logs(id, { follow: !!flags.follow, ...(tail !== undefined && tail >= 0 ? { tailLines: tail } : {}) },
    (t) => { if (!done) io.out(t); });
  await Promise.race([follow, io.interrupted]);
  done = true;
  return 0;
}

function streamOut(write: (t: string) => void): Writable {
  return new Writable({ write(chunk: Buffer, _e, cb) { write(chunk.toString('utf8')); cb(); } });
}

async function exec(c: RuntimeEndpointClient, flags: FlagValues, args: readonly string[], io: CliIO): Promise<number> {
  const [id, ...cmd] = args;
  if (!id || cmd.length === 0) throw kdpError('KDP_CONFIG', 'usage: kdp crictl --node NODE exec [-i] [-t] CONTAINER CMD...');
  const timeout = (flags.timeout as number | undefined) ?? 0;
  if (!(timeout >= 0)) throw kdpError('KDP_CONFIG', `--timeout: ${timeout} is not a number of seconds`);
  const interactive = !!flags.interactive;
  const tty = !!flags.tty;
  if (!interactive && !tty) {
    const r = await c.call<{ stdout: string; stderr: string; exitCode: number }>('runtime.v1.RuntimeService/ExecSync',
      { containerId: id, cmd, timeout });
    io.out(Buffer.from(r.stdout, 'base64').toString('utf8'));
    io.err(Buffer.from(r.stderr, 'base64').toString('utf8'));
    return r.exitCode;
  }
  const { url } = await c.call<{ url: string }>('runtime.v1.RuntimeService/Exec',
    { containerId: id, cmd, tty, stdin: interactive, stdout: true, stderr: !tty });
  const stdin = interactive ? process.stdin : undefined;
  const raw = tty && interactive && process.stdin.isTTY;
  if (raw) process.stdin.setRawMode(true);
  try {
    return await c.exec(url, {
      stdin, stdout: streamOut((t) => io.out(t)), stderr: streamOut((t) => io.err(t)),
      ...(tty && process.stdout.isTTY ? {
        size: () => ({ cols: process.stdout.columns, rows: process.stdout.rows }),
        onResize: (l: () => void) => { process.stdout.on('resize', l); return () => process.stdout.off('resize', l); },
      } : {}),
    });
  } finally {
    if (raw) process.stdin.setRawMode(false);
  }
}

async function inspect(c: RuntimeEndpointClient, method: string, field: string, flags: FlagValues,
  args: readonly string[], io: CliIO, what: string): Promise<number> {
  output(flags, ['json']);
  if (args.length === 0) throw kdpError('KDP_CONFIG', `expected at least one ${what} ID (or its prefix)`);
  const all = [];
  for (const id of args) all.push(await c.call(method, { [field]: id, verbose: true }));
  // crictl: a single result is not wrapped in a list.
  io.out(`${sortedJson(all.length === 1 ? all[0] : all)}\n`);
  return 0;
}

export const crictlCommand: Command = {
  name: 'crictl',
  summary: 'what a node\'s container runtime holds, as crictl shows it (pods, ps, images, inspect, logs, exec)',
  args: 'pods|ps|images|inspectp POD|inspect CONTAINER|logs CONTAINER|exec CONTAINER CMD...',
  // `exec CONTAINER sh -c '…'`: flags end after the sub-command and the container.
  flagsEndAfterPositionals: 2,
  exits: [
    { code: 0, meaning: 'success; `exec`: the command in the container exited 0 (any other status of it is kdp\'s)' },
  ],
  flags: [
    { name: 'node', type: 'string', help: 'the node whose runtime to ask (its socket is <data-dir>/nodes/NODE/kdp-runtime.sock)' },
    { name: 'runtime-endpoint', short: 'r', type: 'string', help: 'the runtime endpoint socket instead (unix:///path)' },
    DATA_DIR_FLAG,
    { name: 'output', short: 'o', type: 'string', help: 'table or json (inspect, inspectp: json)' },
    { name: 'all', short: 'a', type: 'boolean', default: false, help: 'ps: every container, not only running ones' },
    { name: 'quiet', short: 'q', type: 'boolean', default: false, help: 'pods, ps, images: only IDs' },
    { name: 'no-trunc', type: 'boolean', default: false, help: 'full IDs' },
    { name: 'id', type: 'string', help: 'pods, ps: only this ID (or prefix)' },
    { name: 'pod', short: 'p', type: 'string', help: 'ps: only containers of this pod sandbox ID (or prefix)' },
    { name: 'name', type: 'string', help: 'pods, ps: only names matching this regular expression' },
    { name: 'namespace', type: 'string', help: 'pods, ps: only pod namespaces matching this regular expression' },
    { name: 'state', short: 's', type: 'string', help: 'pods: ready|notready; ps: created|running|exited|unknown' },
    { name: 'label', type: 'strings', help: 'pods, ps: only those with label key=value' },
    { name: 'follow', short: 'f', type: 'boolean', default: false, help: 'logs: follow until the container stops' },
    { name: 'tail', type: 'number', help: 'logs: only the last N lines' },
    { name: 'interactive', short: 'i', type: 'boolean', default: false, help: 'exec: keep stdin open' },
    { name: 'tty', short: 't', type: 'boolean', default: false, help: 'exec: allocate a terminal' },
    { name: 'timeout', type: 'number', help: 'exec without -i/-t: seconds before the command is killed (0: none)' },
  ],
  async run(args, io) {
    const [sub, ...rest] = args.positionals;
    if (!sub) throw kdpError('KDP_CONFIG', USAGE);
    const known = ['pods', 'ps', 'images', 'img', 'inspectp', 'inspect', 'logs', 'exec'];
    if (!known.includes(sub)) throw kdpError('KDP_CONFIG', `unknown crictl command "${sub}"; ${USAGE}`);
    if (['pods', 'ps', 'images', 'img'].includes(sub) && rest.length) {
      throw kdpError('KDP_CONFIG', `${sub} takes no arguments (got ${rest.join(' ')})`);
    }
    const path = endpointPath(args.flags, io.env);
    const { buildRuntimeEndpointClient } = await import('../../kubelet/runtime-endpoint/client.js');
    const c = buildRuntimeEndpointClient(path);
    switch (sub) {
      case 'pods': return pods(c, args.flags, io);
      case 'ps': return ps(c, args.flags, io);
      case 'images': case 'img': return images(c, args.flags, io);
      case 'inspectp': return inspect(c, 'runtime.v1.RuntimeService/PodSandboxStatus', 'podSandboxId', args.flags, rest, io, 'pod');
      case 'inspect': return inspect(c, 'runtime.v1.RuntimeService/ContainerStatus', 'containerId', args.flags, rest, io, 'container');
      case 'logs': return logs(c, args.flags, rest, io);
      default: return exec(c, args.flags, rest, io);
    }
  },
};
