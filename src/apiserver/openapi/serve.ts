// HTTP answers for /openapi/v2 and /openapi/v3[/<gv>] as kube-openapi's handlers give them:
// content negotiation on Accept (none is `*/*`; 406 when nothing offered fits; the index is
// always JSON), a quoted ETag with
// If-None-Match answered 304, and for a v3 document asked with `?hash=`: the stale hash
// redirected (301) to the current one, the current one marked immutable for a year.

import type { OpenApiDoc } from './v3.js';

/** The subtype kubectl asks for (deprecated upstream, still answered) and the current one. */
export const V2_PROTOBUF_DEPRECATED = 'com.github.proto-openapi.spec.v2@v1.0+protobuf';
export const V2_PROTOBUF = 'com.github.proto-openapi.spec.v2.v1.0+protobuf';

export interface OpenApiRequest {
  readonly url: string;
  readonly headers: { readonly [name: string]: string | string[] | undefined };
}

/** What to send: status, headers, body (empty for 301, 304, 406). */
export interface OpenApiAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

interface Offer { type: string; subtype: string; contentType: string; doc: () => OpenApiDoc }

function header(req: OpenApiRequest, name: string): string {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v ?? '';
}

/** Accept's media ranges by descending q (goautoneg.ParseAccept), without parameters. */
export function parseAccept(accept: string): { type: string; subtype: string }[] {
  const out: { type: string; subtype: string; q: number; i: number }[] = [];
  accept.split(',').forEach((part, i) => {
    const [range, ...params] = part.split(';').map((s) => s.trim());
    if (!range) return;
    const [type = '', subtype = '*'] = range.split('/');
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=').map((s) => s.trim());
      if (k === 'q' && v !== undefined) q = Number(v);
    }
    out.push({ type, subtype, q: Number.isNaN(q) ? 0 : q, i });
  });
  return out.filter((c) => c.q > 0).sort((a, b) => b.q - a.q || a.i - b.i);
}

function negotiate(req: OpenApiRequest, offers: readonly Offer[]): Offer | undefined {
  for (const c of parseAccept(header(req, 'accept') || '*/*')) {
    const hit = offers.find((o) => (c.type === o.type || c.type === '*')
      && (c.subtype === o.subtype || c.subtype === '*'));
    if (hit) return hit;
  }
  return undefined;
}

const NOT_ACCEPTABLE: OpenApiAnswer = { status: 406, headers: {}, body: Buffer.alloc(0) };

function content(req: OpenApiRequest, contentType: string, doc: OpenApiDoc,
  extra: Record<string, string> = {}): OpenApiAnswer {
  const etag = `"${doc.etag}"`;
  const headers = { ...extra, 'content-type': contentType, etag };
  const match = header(req, 'if-none-match').split(',').map((s) => s.trim());
  if (match.includes(etag) || match.includes('*')) {
    return { status: 304, headers: { ...extra, etag }, body: Buffer.alloc(0) };
  }
  return { status: 200, headers, body: doc.body };
}

/** `/openapi/v2`: JSON, or gnostic protobuf. */
export function answerV2(req: OpenApiRequest, json: () => OpenApiDoc, proto: () => OpenApiDoc):
  OpenApiAnswer {
  const pb = `application/${V2_PROTOBUF}`;
  const offer = negotiate(req, [
    { type: 'application', subtype: 'json', contentType: 'application/json', doc: json },
    { type: 'application', subtype: V2_PROTOBUF_DEPRECATED, contentType: pb, doc: proto },
    { type: 'application', subtype: V2_PROTOBUF, contentType: pb, doc: proto },
  ]);
  const vary = { vary: 'Accept' };
  return offer ? content(req, offer.contentType, offer.doc(), vary)
    : { ...NOT_ACCEPTABLE, headers: vary };
}

/** `/openapi/v3`, the index: always JSON. */
export function answerV3Index(req: OpenApiRequest, index: OpenApiDoc): OpenApiAnswer {
  return content(req, 'application/json', index);
}

/** `/openapi/v3/<key>[?hash=…]`; undefined when no such document. */
export function answerV3Doc(req: OpenApiRequest, key: string, doc: OpenApiDoc): OpenApiAnswer {
  const offer = negotiate(req, [
    { type: 'application', subtype: 'json', contentType: 'application/json', doc: () => doc }]);
  const vary = { vary: 'Accept' };
  if (!offer) return { ...NOT_ACCEPTABLE, headers: vary };
  const hash = new URLSearchParams(req.url.split('?')[1] ?? '').get('hash');
  if (!hash) return content(req, offer.contentType, doc, vary);
  if (hash !== doc.etag) {
    const location = `/openapi/v3/${key}?hash=${doc.etag}`;
    return { status: 301, headers: { ...vary, etag: `"${doc.etag}"`, location },
      body: Buffer.alloc(0) };
  }
  const expires = new Date(Date.now() + 365 * 86_400_000).toUTCString();
  return content(req, offer.contentType, doc,
    { ...vary, 'cache-control': 'public, immutable', expires });
}
