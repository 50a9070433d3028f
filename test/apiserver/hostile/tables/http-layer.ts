// Requests refused by the HTTP layer, before any route: headers past the limit, a Content-Length
// that is not a number or that disagrees with itself or with Transfer-Encoding, a
// Transfer-Encoding the server does not decode, an Expect it cannot meet, a method token the
// parser does not know. Go's net/http answers these with 431, 400, 501, 417 in plain text; issue
// 17 asks kdp to answer each with a Kubernetes Status body carrying the same code, so clients
// (client-go discards anything else) can show the reason.

import type { HostileCase, HostileTable } from '../cases.js';
import { CORE } from '../fixtures.js';

const CM = `${CORE}/configmaps`;
const POST = `POST ${CM} HTTP/1.1`;
const JSON_TYPE = 'Content-Type: application/json';
const BODY = '{"metadata":{"name":"http-layer"}}';

export const HTTP_LAYER_TABLE: HostileTable = {
  cases: [
    // Go's http.Server takes 1 MiB of request line and headers (DefaultMaxHeaderBytes).
    { name: 'with a 2 MiB header', method: 'GET', path: CM,
      raw: { line: `GET ${CM} HTTP/1.1`, headers: [`X-Big: ${'x'.repeat(2 * 1024 * 1024)}`] },
      expect: { code: 431, reason: '' } },
    { name: 'with 4,000 headers of 300 bytes', method: 'GET', path: CM,
      raw: { line: `GET ${CM} HTTP/1.1`,
        headers: Array.from({ length: 4000 }, (_x, i) => `X-H${i}: ${'v'.repeat(290)}`) },
      expect: { code: 431, reason: '' } },
    { name: 'with a 32 KiB header (under the limit: control)', method: 'GET', path: CM,
      raw: { line: `GET ${CM} HTTP/1.1`, headers: [`X-Big: ${'x'.repeat(32 * 1024)}`] },
      expect: { ok: 200, writes: false } },
    { name: 'with Content-Length: abc', method: 'POST', path: CM,
      raw: { line: POST, headers: [JSON_TYPE, 'Content-Length: abc'], body: BODY },
      expect: { code: 400, reason: 'BadRequest' } },
    { name: 'with two different Content-Lengths', method: 'POST', path: CM,
      raw: { line: POST, headers: [JSON_TYPE, `Content-Length: ${BODY.length}`,
        'Content-Length: 3'], body: BODY },
      expect: { code: 400, reason: 'BadRequest' } },
    // Go lets Transfer-Encoding override the Content-Length (RFC 9112 6.3); Node's parser refuses
    // the pair, a request-smuggling shape, and kdp cannot relax that: a 400 Status is expected.
    { name: 'with Content-Length and Transfer-Encoding: chunked', method: 'POST', path: CM,
      raw: { line: POST, headers: [JSON_TYPE, `Content-Length: ${BODY.length}`,
        'Transfer-Encoding: chunked'],
        body: `${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\n` },
      expect: { code: 400, reason: 'BadRequest' } },
    { name: 'with Transfer-Encoding: gzip', method: 'POST', path: CM,
      raw: { line: POST, headers: [JSON_TYPE, 'Transfer-Encoding: gzip'], body: BODY },
      expect: { code: 501, reason: '', alt: [{ code: 400, reason: 'BadRequest' }] } },
    { name: 'with Expect: 200-ok', method: 'POST', path: CM,
      raw: { line: POST, headers: [JSON_TYPE, 'Expect: 200-ok',
        `Content-Length: ${BODY.length}`], body: BODY },
      expect: { code: 417, reason: '' } },
    { name: 'with a control character in a header value', method: 'GET', path: CM,
      raw: { line: `GET ${CM} HTTP/1.1`, headers: ['X-Bad: a\u0001b'] },
      expect: { code: 400, reason: 'BadRequest' } },
    { name: 'with the unknown method token FOO', method: 'FOO', path: CM,
      raw: { line: `FOO ${CM} HTTP/1.1` },
      expect: { code: 405, reason: 'MethodNotAllowed', alt: [{ code: 400, reason: 'BadRequest' },
        { code: 501, reason: '' }] } },
    { name: 'with a request line that is not HTTP', method: 'GET', path: CM,
      raw: { line: `GET ${CM} SPDY/9` }, expect: { code: 400, reason: 'BadRequest',
        alt: [{ code: 505, reason: '' }] } },
    { name: 'written byte for byte (control)', method: 'GET', path: CM,
      raw: { line: `GET ${CM} HTTP/1.1` }, expect: { ok: 200, writes: false } },
  ] satisfies HostileCase[],
};
