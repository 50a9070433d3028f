// A watch over HTTP: `GET ...?watch=true` answered with newline-delimited JSON events
// `{"type": ..., "object": ...}`. `stop()` ends the stream quietly; the server ending it, or any
// failure, calls `onClose` once (with the error, if any).

import type { IncomingMessage } from 'node:http';
import { kdpError } from '../errors.js';
import { errorFromResponse } from './http-errors.js';
import type { Transport } from './http-transport.js';
import type { KubeObject, WatchEvent, WatchHandle, WatchHandlers } from './types.js';

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

export function startHttpWatch<T extends KubeObject>(
  transport: Transport, path: string, handlers: WatchHandlers<T>,
): WatchHandle {
  const { response, abort } = transport.stream(path);
  let stopped = false;
  let closed = false;
  const close = (err?: Error) => {
    if (stopped || closed) return;
    closed = true;
    abort();
    handlers.onClose?.(err);
  };
  const deliver = (line: string) => {
    if (stopped || closed || line.trim() === '') return;
    let ev: WatchEvent<T>;
    try {
      ev = JSON.parse(line) as WatchEvent<T>;
    } catch (e) {
      close(kdpError('KDP_BAD_REQUEST', `watch stream sent a line that is not JSON: ` +
        `${line.slice(0, 120)}`, {}, e));
      return;
    }
    try {
      handlers.onEvent(ev);
    } catch (e) {
      close(e instanceof Error ? e : new Error(String(e)));
    }
  };

  response.then(async (res) => {
    if (res.statusCode !== 200) {
      close(errorFromResponse(res.statusCode ?? 0, await readAll(res)));
      return;
    }
    res.setEncoding('utf8');
    let buf = '';
    res.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        deliver(line);
      }
    });
    res.on('end', () => {
      deliver(buf);
      close();
    });
    res.on('error', (e) => close(e));
    res.on('close', () => close());
  }, (e: Error) => close(e));

  return {
    stop() {
      if (stopped) return;
      stopped = true;
      abort();
    },
  };
}
