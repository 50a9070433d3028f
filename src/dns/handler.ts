// One DNS message in, one reply out (or none): the server's logic without its sockets, so the
// UDP/TCP listeners, `kdp dns lookup` and the tests share it. Authoritative replies are kept,
// encoded, per exact query bytes until the record index changes (the same bytes ask the same
// question of the same records), so a repeated question costs one map lookup.

import { performance } from 'node:perf_hooks';
import { answerQuestion, type AnswerOptions, type Rcode } from './answer.js';
import type { Forwarder } from './forward.js';
import { badVersReply, encodeReply, errorReply, MAX_TCP_MESSAGE, receive, udpLimit, withId,
  type Query } from './message.js';
import type { DnsMetrics } from './metrics.js';
import type { DnsIndex } from './records.js';

/** Where the records come from: the current index, and a signal when it changes. */
export interface IndexSource {
  current(): DnsIndex;
  /** `fn` runs after every change; returns the unsubscribe. */
  onChange(fn: () => void): () => void;
}

export interface DnsHandlerOptions {
  readonly answer: AnswerOptions;
  readonly source: IndexSource;
  /** Absent or without upstreams: names outside the cluster are REFUSED (and logged). */
  readonly forwarder?: Forwarder;
  readonly metrics?: DnsMetrics;
  readonly log?: (line: string) => void;
  /** Most cached replies (default 10,000; the cache empties when full). */
  readonly cacheSize?: number;
}

export type Proto = 'udp' | 'tcp';

export interface DnsHandler {
  /** The reply to `msg` received over `proto`, or undefined to drop it. Never rejects. */
  handle(msg: Buffer, proto: Proto, fromIPv6?: boolean): Promise<Buffer | undefined>;
  /** The kept reply to exactly this query, synchronously, else undefined (then `handle` it):
   *  the UDP hot path without a promise. */
  cached(msg: Buffer, proto: Proto, fromIPv6?: boolean): Buffer | undefined;
  close(): void;
}

interface Cached {
  readonly reply: Buffer;
  readonly type: string;
  readonly rcode: string;
}

const LOG_EVERY_MS = 30_000;

export function buildDnsHandler(o: DnsHandlerOptions): DnsHandler {
  const cache = new Map<string, Cached>();
  const cacheSize = o.cacheSize ?? 10_000;
  const unsubscribe = o.source.onChange(() => cache.clear());
  const lastLogged = new Map<string, number>();
  const log = (what: string, line: string) => {
    const now = Date.now();
    if ((lastLogged.get(what) ?? -Infinity) + LOG_EVERY_MS > now) return;
    lastLogged.set(what, now);
    o.log?.(line);
  };
  const hasUpstreams = !!o.forwarder && o.forwarder.upstreams.length > 0;

  function observe(proto: Proto, v6: boolean, type: string, rcode: string, plugin: string,
    t0: number): void {
    o.metrics?.observe({ proto, ipv6: v6, type, rcode, plugin,
      seconds: (performance.now() - t0) / 1000 });
  }

  async function forward(msg: Buffer, q: Query, proto: Proto): Promise<{
    reply: Buffer; rcode: string;
  }> {
    if (!hasUpstreams) {
      log('no-upstream', `[ERROR] forward: no upstream resolvers (no nameserver in the host's ` +
        `resolv.conf): refusing ${q.question.name || '.'} ${q.question.type} and every name ` +
        'outside the cluster');
      return { reply: errorReply(q, 'REFUSED'), rcode: 'REFUSED' };
    }
    const r = await o.forwarder!.forward(msg, proto === 'tcp');
    if (r.kind === 'reply') {
      const rcode = RCODE_NAMES[r.msg.readUInt16BE(2) & 0xf] ?? 'NOERROR';
      return { reply: r.msg, rcode };
    }
    if (r.kind === 'busy') {
      log('busy', '[WARNING] forward: too many queries in flight: refusing');
      return { reply: errorReply(q, 'REFUSED'), rcode: 'REFUSED' };
    }
    log('failed', `[ERROR] forward: ${q.question.name || '.'} ${q.question.type}: ${r.reason}`);
    return { reply: errorReply(q, 'SERVFAIL'), rcode: 'SERVFAIL' };
  }

  const keyOf = (msg: Buffer, proto: Proto) =>
    (msg.length <= 512 && msg.length >= 12 ? `${proto}${msg.toString('latin1', 2)}` : undefined);

  function cached(msg: Buffer, proto: Proto, v6 = false): Buffer | undefined {
    const t0 = performance.now();
    const key = keyOf(msg, proto);
    const hit = key !== undefined ? cache.get(key) : undefined;
    if (!hit) return undefined;
    observe(proto, v6, hit.type, hit.rcode, 'kubernetes', t0);
    return withId(hit.reply, msg.readUInt16BE(0));
  }

  async function handle(msg: Buffer, proto: Proto, v6 = false): Promise<Buffer | undefined> {
    const t0 = performance.now();
    const key = keyOf(msg, proto);
    const hit = cached(msg, proto, v6);
    if (hit) return hit;
    const r = receive(msg);
    if (!r.ok) {
      if (r.reply) observe(proto, v6, 'other', r.rcode ?? 'FORMERR', '', t0);
      return r.reply;
    }
    const q = r.query;
    if (q.edns && q.edns.version > 0) {
      observe(proto, v6, q.question.type, 'BADVERS', '', t0);
      return badVersReply(q);
    }
    if (q.question.class !== 'IN') {
      observe(proto, v6, q.question.type, 'REFUSED', '', t0);
      return errorReply(q, 'REFUSED');
    }
    const limit = proto === 'udp' ? udpLimit(q) : MAX_TCP_MESSAGE;
    const index = o.source.current();
    const outcome = answerQuestion(index, q.question, o.answer);
    if (outcome.kind === 'forward') {
      const f = await forward(msg, q, proto);
      observe(proto, v6, q.question.type, f.rcode, 'forward', t0);
      return f.reply;
    }
    let answers = outcome.answers;
    if (outcome.chase && hasUpstreams) {
      answers = [...answers, ...await o.forwarder!.resolve(outcome.chase.name, outcome.chase.type)];
    }
    const reply = encodeReply(q, { ...outcome, answers }, limit);
    // Before the first sync answers may change without an event: not kept.
    if (key !== undefined && !outcome.chase && index.synced) {
      if (cache.size >= cacheSize) cache.clear();
      cache.set(key, { reply, type: q.question.type, rcode: outcome.rcode });
    }
    observe(proto, v6, q.question.type, outcome.rcode, 'kubernetes', t0);
    return reply;
  }

  return {
    cached,
    async handle(msg, proto, v6) {
      try {
        return await handle(msg, proto, v6);
      } catch (e) {
        // A bug must not take the server down: answer SERVFAIL when the query can be read.
        log('internal', `[ERROR] internal: ${(e as Error).message}`);
        const r = receive(msg);
        return r.ok ? errorReply(r.query, 'SERVFAIL') : undefined;
      }
    },
    close() {
      unsubscribe();
      cache.clear();
    },
  };
}

const RCODE_NAMES: Readonly<Record<number, Rcode | string>> = {
  0: 'NOERROR', 1: 'FORMERR', 2: 'SERVFAIL', 3: 'NXDOMAIN', 4: 'NOTIMP', 5: 'REFUSED',
};

/** An index source over a fixed index (tests, `kdp dns lookup` over a snapshot). */
export function staticSource(index: DnsIndex): IndexSource {
  return { current: () => index, onChange: () => () => undefined };
}
