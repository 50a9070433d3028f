// Streams a watch as newline-delimited JSON over a chunked response. Events produced while the
// watch starts are queued until the response head is written; lines are written in batches (one
// write per turn of the event loop); cleanup hangs on the response's `close` (the request's fires
// as soon as its body is read). A client that stops reading is cut off once MAX_BUFFERED bytes
// wait for it (it relists, as after any closed watch).

import type { FastifyReply } from 'fastify';
import type { KubeObject, WatchEvent, WatchHandle } from '../../client/types.js';
import type { ServedResource } from '../resource-types.js';
import type { IncludeObject } from '../table/index.js';
import { toTable } from '../table/index.js';
import type { WatchSink } from '../rest/watch.js';

const MAX_BUFFERED = 64 * 1024 * 1024;

/** Encoded JSON lines shared by every plain-JSON watcher (objects are shared read-only). */
export type LineCache = WeakMap<object, Partial<Record<string, string>>>;

export interface StreamOptions {
  readonly table: boolean;
  readonly include: IncludeObject;
  readonly now: () => Date;
  readonly lines: LineCache;
}

function plainLine(ev: WatchEvent, cache: LineCache): string {
  let byType = cache.get(ev.object);
  const hit = byType?.[ev.type];
  if (hit) return hit;
  const line = JSON.stringify({ type: ev.type, object: ev.object }) + '\n';
  if (!byType) { byType = {}; cache.set(ev.object, byType); }
  byType[ev.type] = line;
  return line;
}

/** A sink that buffers until `attach` and then writes each event as one line. */
export function buildWatchStream(r: ServedResource, opts: StreamOptions) {
  let reply: FastifyReply | undefined;
  let pending: string[] = [];
  let flushScheduled = false;
  let closed = false;
  let ended = false;
  let first = true;
  const encode = (ev: WatchEvent): string => {
    if (!opts.table || ev.type === 'ERROR' || ev.type === 'BOOKMARK') {
      return plainLine(ev, opts.lines);
    }
    const o = ev.object as KubeObject;
    const t = toTable(r, [o], { resourceVersion: o.metadata.resourceVersion }, opts.include,
      opts.now(), first);
    first = false;
    return JSON.stringify({ type: ev.type, object: t }) + '\n';
  };
  const flush = () => {
    flushScheduled = false;
    if (!reply || ended || !pending.length) return;
    const raw = reply.raw;
    raw.write(pending.join(''));
    pending = [];
    if (raw.writableLength > MAX_BUFFERED) finish();
  };
  const finish = () => {
    if (ended) return;
    if (reply) flush();
    ended = true;
    if (reply && !reply.raw.writableEnded) reply.raw.end();
  };
  const sink: WatchSink = {
    onEvent(ev) {
      if (ended) return;
      pending.push(encode(ev));
      if (reply && !flushScheduled) {
        flushScheduled = true;
        setImmediate(flush);
      }
    },
    onClose() {
      closed = true;
      if (reply) finish();
    },
  };
  return {
    sink,
    attach(rep: FastifyReply, handle: WatchHandle) {
      reply = rep;
      rep.hijack();
      rep.raw.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache',
        'Transfer-Encoding': 'chunked' });
      rep.raw.flushHeaders();
      rep.raw.on('close', () => { handle.stop(); ended = true; });
      if (closed) finish(); else flush();
    },
  };
}
