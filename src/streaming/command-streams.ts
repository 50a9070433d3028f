// The per-transport half of exec/attach: turning an accepted SPDY session or WebSocket into the
// five remote-command streams (stdin, stdout, stderr, error, resize) as the kubelet's
// createHTTPStreamStreams / createWebSocketStreams do.

import type { Duplex, Readable, Writable } from 'node:stream';
import type { StreamOptions } from '../kubelet/streams.js';
import { encodeStatusV1, encodeStatusV4 } from './exec-status.js';
import type { ExecStatus } from './exec-status.js';
import { headerValue } from './spdy-frames.js';
import { SpdySession } from './spdy-session.js';
import type { SpdyStream } from './spdy-session.js';
import { WsChannels } from './ws-channels.js';
import type { ChannelMode } from './ws-channels.js';

/** SPDY sub-protocols the kubelet serves for exec/attach (SupportedStreamingProtocols). */
export const SPDY_REMOTE_COMMAND_PROTOCOLS = [
  'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io',
] as const;

/** WebSocket sub-protocols: the kubelet's, plus v5 (ExtendWebSocketsToKubelet). */
export const WS_REMOTE_COMMAND_PROTOCOLS = [
  'v5.channel.k8s.io', 'v4.channel.k8s.io', 'v4.base64.channel.k8s.io',
  'channel.k8s.io', 'base64.channel.k8s.io', '',
] as const;

/** How long the client has to open its streams after the upgrade (DefaultStreamCreationTimeout). */
export const STREAM_CREATION_TIMEOUT_MS = 30_000;

export interface CommandStreams {
  readonly stdin?: Readable;
  readonly stdout?: Writable;
  readonly stderr?: Writable;
  readonly resize?: Readable;
  /** Writes the final status on the error stream (in the protocol's format) and ends it. */
  writeStatus(status: ExecStatus): Promise<void>;
  /** Ends the connection once everything queued is sent. */
  close(): void;
  /** Resolves when the client's connection is gone. */
  readonly gone: Promise<void>;
}

function endWith(stream: Writable, data: Buffer | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (stream.writableEnded || stream.destroyed) return resolve();
    stream.once('error', () => resolve());
    if (data) stream.end(data, () => resolve());
    else stream.end(() => resolve());
  });
}

/** Waits for the client's SPDY streams (error first, then the requested ones). */
export function spdyCommandStreams(
  socket: Duplex, head: Buffer, protocol: string, opts: StreamOptions,
): Promise<CommandStreams> {
  const version = protocol === 'channel.k8s.io' ? 1 : Number(protocol[1]);
  const expected = 1 + Number(opts.stdin) + Number(opts.stdout) + Number(opts.stderr)
    + Number(opts.tty && version >= 3);
  const got = new Map<string, SpdyStream>();
  let markGone!: () => void;
  const gone = new Promise<void>((r) => { markGone = r; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      session.close(new Error('timed out waiting for client to create streams'));
    }, STREAM_CREATION_TIMEOUT_MS);
    const session: SpdySession = new SpdySession(socket, head, {
      onStream(stream) {
        stream.reply();
        const type = headerValue(stream.headers, 'streamtype');
        if (['error', 'stdin', 'stdout', 'stderr', 'resize'].includes(type) && !got.has(type)) {
          got.set(type, stream);
        }
        if (type === 'stdin' || type === 'resize' || type === 'error') stream.on('error', () => {});
        if (got.size === expected) {
          clearTimeout(timer);
          resolve(build());
        }
      },
      onClose(err) {
        clearTimeout(timer);
        markGone();
        reject(err ?? new Error('connection closed before the client created its streams'));
      },
    });
    const build = (): CommandStreams => {
      const errorStream = got.get('error');
      return {
        stdin: got.get('stdin'),
        stdout: got.get('stdout'),
        stderr: got.get('stderr'),
        resize: got.get('resize'),
        writeStatus: (s) => (errorStream
          ? endWith(errorStream, version >= 4 ? encodeStatusV4(s) : encodeStatusV1(s))
          : Promise.resolve()),
        close: () => session.end(),
        gone,
      };
    };
  });
}

/** Creates the five channels on an accepted WebSocket and signals readiness. */
export function wsCommandStreams(
  socket: Duplex, head: Buffer, protocol: string, opts: StreamOptions,
): CommandStreams {
  const modes: ChannelMode[] = [
    opts.stdin ? 'read' : 'ignore', opts.stdout ? 'write' : 'ignore',
    opts.stderr ? 'write' : 'ignore', 'write', 'read',
  ];
  let markGone!: () => void;
  const gone = new Promise<void>((r) => { markGone = r; });
  const conn = new WsChannels(socket, head, modes, {
    base64: protocol.includes('base64'), supportsClose: protocol === 'v5.channel.k8s.io',
  }, () => markGone());
  const [stdin, stdout, stderr, error, resize] = conn.channels as unknown as [
    Duplex, Duplex, Duplex, Duplex, Duplex];
  // "Send an empty message to the lowest writable channel" (kubelet createWebSocketStreams).
  (opts.stdout ? stdout : opts.stderr ? stderr : error).write(Buffer.alloc(0));
  const v4 = protocol.startsWith('v4.') || protocol.startsWith('v5.');
  return {
    stdin: opts.stdin ? stdin : undefined,
    stdout: opts.stdout ? stdout : undefined,
    stderr: opts.stderr ? stderr : undefined,
    resize,
    writeStatus: (s) => endWith(error, v4 ? encodeStatusV4(s) : encodeStatusV1(s)),
    close: () => conn.close(),
    gone,
  };
}
