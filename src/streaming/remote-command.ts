// serveRemoteCommand: exec and attach over SPDY/3.1 or WebSocket, as the kubelet's ServeExec /
// ServeAttach. Order: negotiate the sub-protocol (refusing as upstream), start the process
// (a start failure is answered before the upgrade, as the kubelet's GetExec errors are), upgrade,
// collect the client's streams, pump stdio and resize, then write the status and close.

import type { IncomingMessage } from 'node:http';
import type { Duplex, Readable } from 'node:stream';
import { KdpError } from '../errors.js';
import type { StreamOptions, StreamProcess } from '../kubelet/streams.js';
import {
  SPDY_REMOTE_COMMAND_PROTOCOLS, WS_REMOTE_COMMAND_PROTOCOLS, spdyCommandStreams, wsCommandStreams,
} from './command-streams.js';
import type { CommandStreams } from './command-streams.js';
import { internalErrorStatus, nonZeroExitStatus, successStatus } from './exec-status.js';
import type { ExecStatus } from './exec-status.js';
import { acceptSpdy, isWebSocketRequest, negotiateSpdy, refuseText } from './http-upgrade.js';
import { watchResize } from './resize.js';
import { acceptWebSocketHandshake, selectWebSocketProtocol } from './ws-channels.js';

/** How long output may stay open after the process exited (a background child holding it). */
const OUTPUT_LINGER_MS = 2_000;

function requestUrl(req: IncomingMessage): URL {
  return new URL(req.url ?? '/', 'http://kubelet.invalid');
}

/** Upstream NewOptions: tty implies no separate stderr; at least one stream is required. */
function normalise(opts: StreamOptions): StreamOptions {
  return { ...opts, stderr: opts.stderr && !opts.tty };
}

export async function serveRemoteCommand(
  req: IncomingMessage, socket: Duplex, head: Buffer, opts: StreamOptions,
  start: () => Promise<StreamProcess>,
): Promise<void> {
  const options = normalise(opts);
  socket.on('error', () => {});
  if (!options.stdin && !options.stdout && !options.stderr) {
    refuseText(socket, 400, 'you must specify at least 1 of stdin, stdout, stderr');
    return;
  }
  const url = requestUrl(req);
  const isAttach = /(^|\/)attach(\/|$)/.test(url.pathname);
  const argv = url.searchParams.getAll('command');

  const ws = isWebSocketRequest(req);
  let protocol: string | undefined;
  if (ws) {
    protocol = selectWebSocketProtocol(req, WS_REMOTE_COMMAND_PROTOCOLS);
    if (protocol === undefined) {
      refuseText(socket, 403, 'unable to upgrade: requested protocol(s) are not supported');
      return;
    }
  } else {
    protocol = negotiateSpdy(req, socket, SPDY_REMOTE_COMMAND_PROTOCOLS);
    if (protocol === undefined) return;
  }

  let proc: StreamProcess;
  try {
    proc = await start();
  } catch (e) {
    const status = e instanceof KdpError ? e.status : 500;
    refuseText(socket, status, e instanceof Error ? e.message : String(e));
    return;
  }

  let streams: CommandStreams;
  try {
    if (ws) {
      if (!acceptWebSocketHandshake(req, socket, protocol)) throw new Error('handshake refused');
      streams = wsCommandStreams(socket, head, protocol, options);
    } else {
      acceptSpdy(socket, protocol);
      streams = await spdyCommandStreams(socket, head, protocol, options);
    }
  } catch {
    proc.close();
    socket.destroy();
    return;
  }
  await pump(proc, streams, isAttach, argv);
}

async function pump(
  proc: StreamProcess, streams: CommandStreams, isAttach: boolean, argv: readonly string[],
): Promise<void> {
  let clientGone = false;
  void streams.gone.then(() => {
    clientGone = true;
    proc.close();
  });

  if (streams.stdin && proc.stdin) {
    const sink = proc.stdin;
    sink.on('error', () => {});
    streams.stdin.pipe(sink);
  } else {
    streams.stdin?.resume();
  }
  if (streams.resize) watchResize(streams.resize, (w, h) => proc.resize(w, h));

  const outputs: Array<Promise<void>> = [];
  const sources: Array<[Readable, NonNullable<CommandStreams['stdout']>]> = [];
  if (proc.stdout && streams.stdout) sources.push([proc.stdout, streams.stdout]);
  if (proc.stderr && streams.stderr) sources.push([proc.stderr, streams.stderr]);
  for (const [src, dst] of sources) {
    dst.on('error', () => {});
    src.pipe(dst, { end: false });
    outputs.push(new Promise((resolve) => {
      src.once('end', resolve);
      src.once('close', resolve);
      src.once('error', () => resolve());
    }));
  }

  let failure: string | undefined;
  const exited = proc.exited.catch((e: unknown) => {
    failure = e instanceof Error ? e.message : String(e);
    return undefined;
  });
  const code = await Promise.race([exited, streams.gone.then(() => null)]);
  if (code === null || clientGone) {
    proc.close();
    return;
  }
  if (code !== undefined) {
    await Promise.race([Promise.all(outputs), delay(OUTPUT_LINGER_MS)]);
  }
  await Promise.all(sources.map(([src, dst]) => {
    src.unpipe(dst);
    return new Promise<void>((resolve) => {
      if (dst.writableEnded) return resolve();
      dst.end(() => resolve());
    });
  }));
  const status: ExecStatus = failure !== undefined
    ? internalErrorStatus(`${isAttach ? 'error attaching to container'
      : 'error executing command in container'}: ${failure}`)
    : isAttach || code === undefined || code === 0
      ? successStatus()
      : nonZeroExitStatus(argv, code);
  await streams.writeStatus(status);
  streams.stdin?.unpipe();
  proc.close();
  streams.close();
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
