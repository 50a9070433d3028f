// The server end of a SPDY/3.1 session as Go's moby/spdystream client expects it: the client
// opens every stream (SYN_STREAM, odd ids), the server accepts it with a SYN_REPLY or refuses it
// with RST_STREAM, pings are echoed, GOAWAY ends the session. Like spdystream, no flow-control
// windows are kept (spdystream never sends WINDOW_UPDATE and ignores it); backpressure is the
// transport's: a stream whose reader lags pauses the whole transport, a full transport pauses
// every stream's writer.

import { Duplex } from 'node:stream';
import {
  FrameReader, HeaderDecoder, HeaderEncoder, MAX_DATA_PAYLOAD, RST_CANCEL, RST_INVALID_STREAM,
  TYPE_GOAWAY, TYPE_HEADERS, TYPE_PING, TYPE_RST_STREAM, TYPE_SYN_STREAM, FLAG_FIN,
  controlFrame, dataFrame, dataFrameHeader, goAwayFrame, pingFrame, rstStreamFrame, TYPE_SYN_REPLY,
} from './spdy-frames.js';
import type { SpdyFrame, SpdyHeaders } from './spdy-frames.js';

/** Outgoing data gathered beyond this is sent at once rather than at the end of the turn. */
const BATCH_BYTES = 1024 * 1024;

/**
 * One client-opened stream. Readable: the client's data (ends on its FIN). Writable: data to
 * the client; `end()` sends FIN (a half-close, as spdystream's Close). `destroy()` resets it.
 */
export class SpdyStream extends Duplex {
  /** Set once the SYN_REPLY went out; data is only sent after it. */
  private replied = false;
  private localFin = false;
  private remoteFin = false;
  private reset = false;

  constructor(
    private readonly session: SpdySession,
    readonly id: number,
    readonly headers: SpdyHeaders,
  ) {
    super({
      allowHalfOpen: true, readableHighWaterMark: 256 * 1024, writableHighWaterMark: 1024 * 1024,
    });
  }

  /** Accepts the stream (SYN_REPLY with no headers), as spdystream's newSpdyStream does. */
  reply(): void {
    if (this.replied || this.reset) return;
    this.replied = true;
    this.session.sendReply(this.id);
  }

  /** Refuses or aborts the stream with RST_STREAM (CANCEL, as spdystream's Reset). */
  resetStream(status = RST_CANCEL): void {
    if (this.reset) return;
    this.reset = true;
    this.session.sendFrame(rstStreamFrame(this.id, status));
    this.session.forget(this.id);
    this.destroy();
  }

  /** Data from the client; returns false when the transport must pause. */
  receive(data: readonly Buffer[], fin: boolean): boolean {
    let more = true;
    if (!this.remoteFin) for (const part of data) if (part.length > 0) more = this.push(part);
    if (fin) this.remoteEnded();
    return more;
  }

  remoteEnded(): void {
    if (this.remoteFin) return;
    this.remoteFin = true;
    this.push(null);
    this.maybeForget();
  }

  /** The client reset the stream or the session ended. */
  remoteReset(): void {
    this.reset = true;
    if (!this.remoteFin) {
      this.remoteFin = true;
      this.push(null);
    }
    this.destroy();
  }

  override _read(): void {
    this.session.streamReadable(this);
  }

  /**
   * Outgoing data is gathered for one event-loop turn (or up to BATCH_BYTES) and sent as one
   * frame: the Go client reads every frame with several syscalls, so fewer, larger frames
   * cost it less per byte. The payload is never copied on a socket transport.
   */
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.queue([chunk], cb);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, cb: (err?: Error | null) => void): void {
    this.queue(chunks.map((c) => c.chunk), cb);
  }

  private pending: Buffer[] = [];
  private pendingSize = 0;
  private flushScheduled = false;

  private queue(chunks: readonly Buffer[], cb: (err?: Error | null) => void): void {
    if (this.reset) return cb();
    this.reply();
    for (const c of chunks) {
      this.pending.push(c);
      this.pendingSize += c.length;
    }
    if (this.pendingSize >= BATCH_BYTES) this.flushPending();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flushPending());
    }
    if (this.session.isFull) this.session.afterDrain(cb);
    else cb();
  }

  /** Sends what is gathered as frames of at most MAX_DATA_PAYLOAD bytes. */
  private flushPending(): void {
    this.flushScheduled = false;
    if (this.pendingSize === 0) return;
    const parts = this.pending;
    this.pending = [];
    this.pendingSize = 0;
    if (this.reset) return;
    let group: Buffer[] = [];
    let size = 0;
    const send = (): void => {
      if (group.length > 0) this.session.sendDataParts(this.id, group, size);
      group = [];
      size = 0;
    };
    for (const chunk of parts) {
      for (let at = 0; at < chunk.length; at += MAX_DATA_PAYLOAD) {
        const part = chunk.subarray(at, at + MAX_DATA_PAYLOAD);
        if (size + part.length > MAX_DATA_PAYLOAD) send();
        group.push(part);
        size += part.length;
      }
    }
    send();
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.flushPending();
    if (!this.reset && !this.localFin) {
      this.reply();
      this.localFin = true;
      this.session.sendFrame(dataFrame(this.id, Buffer.alloc(0), true));
    }
    this.maybeForget();
    cb();
  }

  override _destroy(err: Error | null, cb: (err: Error | null) => void): void {
    if (!this.reset && !(this.localFin && this.remoteFin) && !this.session.isClosed) {
      this.reset = true;
      this.session.sendFrame(rstStreamFrame(this.id, RST_CANCEL));
    }
    this.session.forget(this.id);
    this.session.streamReadable(this);
    cb(err);
  }

  private maybeForget(): void {
    if (this.localFin && this.remoteFin) this.session.forget(this.id);
  }
}

export interface SpdySessionEvents {
  /** A new client stream; call `reply()` to accept or `resetStream()` to refuse. */
  onStream(stream: SpdyStream): void;
  /** The session ended (transport closed, GOAWAY, or protocol error). */
  onClose?(err?: Error): void;
}

/** A SPDY/3.1 server session over any Duplex (a TCP/TLS socket or a WebSocket stream). */
export class SpdySession {
  private readonly reader = new FrameReader();
  private readonly encoder = new HeaderEncoder();
  private readonly decoder = new HeaderDecoder();
  private readonly streams = new Map<number, SpdyStream>();
  private readonly blocked = new Set<SpdyStream>();
  private drainWaiters: Array<() => void> = [];
  private lastStreamId = 0;
  private closed = false;

  constructor(
    private readonly transport: Duplex, head: Buffer, private readonly events: SpdySessionEvents,
  ) {
    transport.on('data', (chunk: Buffer) => this.onData(chunk));
    transport.on('drain', () => this.flushDrainWaiters());
    transport.on('end', () => this.close());
    transport.on('close', () => this.close());
    transport.on('error', (err: Error) => this.close(err));
    if (head.length > 0) this.onData(head);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The transport holds more than its high-water mark: writers should wait for drain. */
  get isFull(): boolean {
    return !this.closed && this.transport.writableNeedDrain;
  }

  /** Writes a frame; false when the transport's buffer is full (wait with afterDrain). */
  sendFrame(frame: Buffer): boolean {
    if (this.closed || this.transport.destroyed) return true;
    return this.transport.write(frame);
  }

  sendData(streamId: number, data: Buffer): boolean {
    return this.sendDataParts(streamId, [data], data.length);
  }

  /**
   * One data frame whose payload is `parts` (total `size` ≤ MAX_DATA_PAYLOAD), never copied:
   * header and parts are written corked (one writev on a socket; on a WebSocket tunnel each
   * write is a message, which the client concatenates).
   */
  sendDataParts(streamId: number, parts: readonly Buffer[], size: number): boolean {
    if (this.closed || this.transport.destroyed) return true;
    this.transport.cork();
    let ok = this.transport.write(dataFrameHeader(streamId, size, false));
    for (const p of parts) ok = this.transport.write(p);
    this.transport.uncork();
    return ok;
  }

  sendReply(streamId: number): void {
    const block = this.encoder.encode(new Map());
    const payload = Buffer.allocUnsafe(4 + block.length);
    payload.writeUInt32BE(streamId & 0x7fffffff, 0);
    block.copy(payload, 4);
    this.sendFrame(controlFrame(TYPE_SYN_REPLY, 0, payload));
  }

  afterDrain(cb: () => void): void {
    if (this.closed) return cb();
    this.drainWaiters.push(cb);
  }

  forget(id: number): void {
    const s = this.streams.get(id);
    if (s) {
      this.streams.delete(id);
      this.streamReadable(s);
    }
  }

  /** A stream's reader caught up: resume the transport once no stream is behind. */
  streamReadable(stream: SpdyStream): void {
    if (this.blocked.delete(stream) && this.blocked.size === 0 && !this.closed) {
      this.transport.resume();
    }
  }

  /** Ends the session: GOAWAY, then the transport is ended once buffered frames are out. */
  end(): void {
    if (this.closed) return;
    this.sendFrame(goAwayFrame(this.lastStreamId));
    this.close();
  }

  /** Tears the session down at once; every stream sees a reset. */
  close(err?: Error): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of [...this.streams.values()]) s.remoteReset();
    this.streams.clear();
    this.flushDrainWaiters();
    if (err) this.transport.destroy();
    else this.transport.end(); // flushes what is queued; the peer may already have ended
    this.events.onClose?.(err);
  }

  private flushDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.reader.push(chunk);
    try {
      for (let f = this.reader.next(); f && !this.closed; f = this.reader.next()) this.handle(f);
    } catch (e) {
      this.close(e instanceof Error ? e : new Error(String(e)));
    }
  }

  private handle(f: SpdyFrame): void {
    if (f.kind === 'data') {
      const s = this.streams.get(f.streamId);
      if (!s) return;
      if (!s.receive(f.data, (f.flags & FLAG_FIN) !== 0) && !this.blocked.has(s)) {
        this.blocked.add(s);
        this.transport.pause();
      }
      return;
    }
    const p = f.payload;
    switch (f.type) {
      case TYPE_SYN_STREAM: return this.onSynStream(f.flags, p);
      case TYPE_RST_STREAM: {
        const s = this.streams.get(p.readUInt32BE(0) & 0x7fffffff);
        if (s) {
          this.streams.delete(s.id);
          s.remoteReset();
        }
        return;
      }
      case TYPE_HEADERS: {
        // Headers after the first frame carry nothing kubectl uses; the block must still be
        // inflated to keep the zlib context in step.
        this.decoder.decode(p.subarray(4));
        const s = this.streams.get(p.readUInt32BE(0) & 0x7fffffff);
        if (s && (f.flags & FLAG_FIN)) s.remoteEnded();
        return;
      }
      case TYPE_PING: {
        const id = p.readUInt32BE(0);
        if (id % 2 === 1) this.sendFrame(pingFrame(id)); // client-initiated: echo
        return;
      }
      case TYPE_GOAWAY:
        this.close();
        return;
      default:
        return; // SETTINGS, WINDOW_UPDATE, SYN_REPLY: nothing to do (spdystream ignores them)
    }
  }

  private onSynStream(flags: number, p: Buffer): void {
    if (p.length < 10) throw new Error('spdy: SYN_STREAM too short');
    const id = p.readUInt32BE(0) & 0x7fffffff;
    const headers = this.decoder.decode(p.subarray(10));
    if (id === 0 || id % 2 === 0 || id <= this.lastStreamId || this.streams.has(id)) {
      this.sendFrame(rstStreamFrame(id, RST_INVALID_STREAM));
      return;
    }
    this.lastStreamId = id;
    const stream = new SpdyStream(this, id, headers);
    this.streams.set(id, stream);
    if (flags & FLAG_FIN) stream.remoteEnded();
    this.events.onStream(stream);
  }
}
