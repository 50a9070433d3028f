// DNS messages on the wire, through dns-packet: a received query is checked the way miekg/dns
// (CoreDNS's server) accepts them, and a reply is encoded with EDNS0 and UDP truncation. What a
// query cannot be answered with says so in its rcode; what cannot even be replied to is
// `undefined` (dropped).
//
// Accepting (miekg/dns DefaultMsgAcceptFunc and server): shorter than a header, or a response
// (QR set) → dropped; opcode other than QUERY → NOTIMP; not exactly one question, an
// undecodable message, or more than one OPT → FORMERR; EDNS version above 0 → BADVERS.
// Replies echo the ID, opcode, RD and CD, carry AA when authoritative, and an OPT
// (UDP size 1232, the DNS flag day's) when the query had one.

import dnsPacket, {
  type Answer, type DecodedPacket, type OptAnswer, type Packet,
} from 'dns-packet';
import type { Outcome, Question, Rcode } from './answer.js';

/** The UDP payload size kdp advertises (DNS flag day 2020) and the most it sends over UDP. */
export const EDNS_UDP_SIZE = 1232;
const MAX_UDP_REPLY = 4096;
const PLAIN_UDP_SIZE = 512;
export const MAX_TCP_MESSAGE = 65535;

const RCODE_NUMBER: Readonly<Record<Rcode, number>> = {
  NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5,
};
const BADVERS = 16;

const QR = 0x8000;
const AA = dnsPacket.AUTHORITATIVE_ANSWER;
const TC = dnsPacket.TRUNCATED_RESPONSE;
const RD = dnsPacket.RECURSION_DESIRED;
const CD = dnsPacket.CHECKING_DISABLED;
const OPCODE_MASK = 0x7800;

export interface Edns {
  readonly udpSize: number;
  readonly version: number;
  readonly dnssecOk: boolean;
}

export interface Query {
  readonly id: number;
  /** The 16 header flag bits as received. */
  readonly flags: number;
  readonly question: Question & { readonly class: string };
  readonly edns?: Edns;
}

export type Received =
  | { readonly ok: true; readonly query: Query }
  /** `reply` undefined: drop the message. */
  | { readonly ok: false; readonly reply?: Buffer; readonly rcode?: string };

const nameCodec = (dnsPacket as unknown as {
  name: { encode(n: string): Buffer };
}).name;

/** A header-only error reply (FORMERR/NOTIMP) to a message we could not read past its header. */
function headerReply(buf: Buffer, rcode: number): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt16BE(buf.readUInt16BE(0), 0);
  const flags = buf.readUInt16BE(2);
  out.writeUInt16BE(QR | (flags & (OPCODE_MASK | RD | CD)) | rcode, 2);
  return out;
}

/** Checks and decodes one received message (never throws). */
export function receive(buf: Buffer): Received {
  if (buf.length < 12) return { ok: false };
  const flags = buf.readUInt16BE(2);
  if (flags & QR) return { ok: false };
  if ((flags & OPCODE_MASK) !== 0) {
    return { ok: false, reply: headerReply(buf, 4), rcode: 'NOTIMP' };
  }
  const formErr: Received = { ok: false, reply: headerReply(buf, 1), rcode: 'FORMERR' };
  if (buf.readUInt16BE(4) !== 1) return formErr;
  let p: DecodedPacket;
  try {
    p = dnsPacket.decode(buf);
  } catch {
    return formErr;
  }
  const q = p.questions?.[0];
  if (!q) return formErr;
  // A name dns-packet cannot write back byte for byte (a `.` or bytes that are not UTF-8
  // inside a label, compression in the question) is refused rather than answered for another.
  try {
    const again = nameCodec.encode(q.name);
    if (!again.equals(buf.subarray(12, 12 + again.length))) return formErr;
  } catch {
    return formErr;
  }
  if (String(q.class ?? 'IN').startsWith('UNKNOWN_')) return formErr;
  const opts = (p.additionals ?? []).filter((a): a is OptAnswer => a.type === 'OPT');
  if (opts.length > 1) return formErr;
  const opt = opts[0];
  const edns = opt ? { udpSize: opt.udpPayloadSize, version: opt.ednsVersion,
    dnssecOk: opt.flag_do } : undefined;
  return { ok: true, query: { id: p.id ?? 0, flags,
    question: { name: q.name === '.' ? '' : q.name, type: q.type, class: String(q.class ?? 'IN') },
    ...(edns ? { edns } : {}) } };
}

/** The most a reply to this query may be over UDP (512 without EDNS). */
export function udpLimit(q: Query): number {
  if (!q.edns) return PLAIN_UDP_SIZE;
  return Math.min(MAX_UDP_REPLY, Math.max(PLAIN_UDP_SIZE, q.edns.udpSize));
}

function opt(extendedRcode = 0): Answer {
  return { name: '.', type: 'OPT', udpPayloadSize: EDNS_UDP_SIZE, extendedRcode, ednsVersion: 0,
    flags: 0, flag_do: false, options: [] } as OptAnswer;
}

export interface ReplyParts {
  readonly rcode: Rcode;
  readonly authoritative: boolean;
  readonly answers: readonly Answer[];
  readonly authorities: readonly Answer[];
  readonly additionals: readonly Answer[];
}

/**
 * The encoded reply, at most `limit` bytes: additional records are dropped first (no TC, RFC
 * 2181 §9), then authority and answer records from the end, with TC set.
 */
export function encodeReply(q: Query, parts: ReplyParts, limit: number): Buffer {
  const flags = (q.flags & (OPCODE_MASK | RD | CD)) | (parts.authoritative ? AA : 0)
    | RCODE_NUMBER[parts.rcode];
  const question = [{ name: q.question.name, type: q.question.type, class: q.question.class }];
  const ednsRR = q.edns ? [opt()] : [];
  const build = (answers: readonly Answer[], authorities: readonly Answer[],
    additionals: readonly Answer[], tc: boolean): Packet => ({
    type: 'response', id: q.id, flags: flags | (tc ? TC : 0),
    questions: question as Packet['questions'],
    answers: [...answers], authorities: [...authorities], additionals: [...additionals, ...ednsRR],
  });
  let packet = build(parts.answers, parts.authorities, parts.additionals, false);
  if (dnsPacket.encodingLength(packet) <= limit) return dnsPacket.encode(packet);
  packet = build(parts.answers, parts.authorities, [], false);
  if (dnsPacket.encodingLength(packet) <= limit) return dnsPacket.encode(packet);
  // Keep as many answers as fit (a binary search over the count), no authority section.
  let lo = 0;
  let hi = parts.answers.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const fits = dnsPacket.encodingLength(build(parts.answers.slice(0, mid), [], [], true)) <= limit;
    if (fits) lo = mid;
    else hi = mid - 1;
  }
  return dnsPacket.encode(build(parts.answers.slice(0, lo), [], [], true));
}

/** The reply for an answer outcome, or the error replies of EDNS and class checks. */
export function replyTo(q: Query, outcome: Extract<Outcome, { kind: 'answer' }>,
  limit: number): Buffer {
  return encodeReply(q, outcome, limit);
}

/** BADVERS (RFC 6891 §6.1.3): an OPT with the extended rcode, nothing else. */
export function badVersReply(q: Query): Buffer {
  const flags = (q.flags & (OPCODE_MASK | RD | CD)) | (BADVERS & 0xf);
  return dnsPacket.encode({ type: 'response', id: q.id, flags,
    questions: [{ name: q.question.name, type: q.question.type, class: q.question.class }] as
      Packet['questions'],
    additionals: [opt(BADVERS >> 4)] });
}

/** A short error reply (SERVFAIL, REFUSED, NOTIMP) with the question, no records. */
export function errorReply(q: Query, rcode: Rcode): Buffer {
  return encodeReply(q, { rcode, authoritative: false, answers: [], authorities: [],
    additionals: [] }, MAX_TCP_MESSAGE);
}

/** Sets the ID of an encoded message (a cached reply, a forwarded one). */
export function withId(msg: Buffer, id: number): Buffer {
  const out = Buffer.from(msg);
  out.writeUInt16BE(id, 0);
  return out;
}
