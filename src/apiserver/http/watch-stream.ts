// Streams a watch as newline-delimited JSON over a chunked response. Events produced while the
// watch starts are queued until the response head is written; cleanup hangs on the response's
// `close` (the request's fires as soon as its body is read).

import type { FastifyReply } from 'fastify';
import type { KubeObject, WatchEvent, WatchHandle } from '../../client/types.js';
import type { ServedResource } from '../resource-types.js';
import type { IncludeObject } from '../table/index.js';
import { toTable } from '../table/index.js';
import type { WatchSink } from '../rest/watch.js';

export interface StreamOptions {
  readonly table: boolean;
  readonly include: IncludeObject;
  readonly now: () => Date;
}

/** A sink that buffers until `attach` and then writes each event as one line. */
export function buildWatchStream(r: ServedResource, opts: StreamOptions) {
  let reply: FastifyReply | undefined;
  let queue: string[] = [];
  let closed = false;
  let ended = false;
  let first = true;
  const encode = (ev: WatchEvent): string => {
    if (!opts.table || ev.type === 'ERROR' || ev.type === 'BOOKMARK') {
      return JSON.stringify({ type: ev.type, object: ev.object }) + '\n';
    }
    const o = ev.object as KubeObject;
    const t = toTable(r, [o], { resourceVersion: o.metadata.resourceVersion }, opts.include,
      opts.now(), first);
    first = false;
    return JSON.stringify({ type: ev.type, object: t }) + '\n';
  };
  const finish = () => {
    if (ended) return;
    ended = true;
    if (reply && !reply.raw.writableEnded) reply.raw.end();
  };
  const sink: WatchSink = {
    onEvent(ev) {
      if (ended) return;
      const line = encode(ev);
      if (reply) reply.raw.write(line); else queue.push(line);
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
      for (const l of queue) rep.raw.write(l);
      queue = [];
      rep.raw.on('close', () => { handle.stop(); ended = true; });
      if (closed) finish();
    },
  };
}
