// HTTP-layer refusals: what the server answers before a request reaches a handler, each as a
// Kubernetes Status with `Connection: close`. Node's parser refuses what Go's net/http refuses
// under kube-apiserver; where Go answers itself the status code is Go's (Go's body is plain
// text, the issue asks for a Status), and where Go only closes the connection (headers not
// received within ReadHeaderTimeout) the answer is Node's 408.

import { STATUS_CODES } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { kdpError } from '../errors.js';
import type { KdpError } from '../errors.js';
import { methodNotAllowed } from './rest/errors.js';
import { statusFromError } from './status.js';

/** An error of Node's HTTP parser or request timers (the server's 'clientError'). */
export interface ClientError extends Error {
  readonly code?: string;
  /** llhttp's explanation, e.g. "Invalid character in Content-Length". */
  readonly reason?: string;
  /** The bytes the parser was reading. */
  readonly rawPacket?: Buffer;
}

/** go-restful's answer for a method no route serves, as the apiserver renders it. */
export function methodRefused(): KdpError {
  return methodNotAllowed('the server does not allow this method on the requested resource');
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const REQUEST_LINE = /^(\S+) \S+ HTTP\/\d\.\d\r?$/;

/** A request line Go parses, with a method llhttp does not know (`FOO /api HTTP/1.1`): Go
 *  routes it and go-restful answers 405; a malformed line is 400, as Go's "malformed HTTP
 *  request". */
function unknownMethodIsWellFormed(raw: Buffer | undefined): boolean {
  const line = (raw ?? Buffer.alloc(0)).subarray(0, 8192).toString('latin1').split('\n')[0]!;
  const m = REQUEST_LINE.exec(line);
  return m !== null && TOKEN.test(m[1]!);
}

/** The Status for a client error; `receivingBody`: a request's headers were all read. */
export function clientErrorToKdp(err: ClientError, receivingBody: boolean): KdpError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      // Upstream's timeout filter bounds a non-long-running request, body included.
      return receivingBody ?
        kdpError('KDP_TIMEOUT', 'Timeout: request did not complete within the allotted timeout') :
        kdpError('KDP_REQUEST_TIMEOUT', 'request headers were not received in time');
    case 'HPE_HEADER_OVERFLOW':
      return kdpError('KDP_HEADERS_TOO_LARGE', 'Request Header Fields Too Large');
    case 'HPE_INVALID_METHOD':
      return unknownMethodIsWellFormed(err.rawPacket) ? methodRefused() :
        kdpError('KDP_BAD_REQUEST', 'Bad Request: malformed HTTP request');
    case 'HPE_INVALID_TRANSFER_ENCODING':
      // Go refuses codings other than chunked with 501; Transfer-Encoding beside
      // Content-Length is refused (400) against request smuggling.
      return /Content-Length/i.test(err.reason ?? '') ?
        kdpError('KDP_BAD_REQUEST', `Bad Request: ${err.reason}`) :
        kdpError('KDP_NOT_IMPLEMENTED', 'Unsupported transfer encoding');
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return kdpError('KDP_BAD_REQUEST', `Bad Request: bad Content-Length (${err.reason})`);
    default:
      return kdpError('KDP_BAD_REQUEST', `Bad Request: ${err.reason ?? 'malformed HTTP request'}`);
  }
}

/**
 * How long a refused connection stays open for reading after its answer (Go's
 * rstAvoidanceDelay in closeWriteAndWait): closing with the client's unread request still in
 * the receive buffer sends a reset, and a reset can discard the answer before the client reads it.
 */
export const RST_AVOIDANCE_MS = 500;

/**
 * Writes `e` as a Status response straight to the connection and half-closes it, then reads and
 * drops what the client still sends until it closes or RST_AVOIDANCE_MS pass (as Go's server
 * answers a 431 while the client is still writing its headers).
 */
export function writeStatusAndClose(socket: Duplex, e: KdpError): void {
  const st = statusFromError(e);
  const body = JSON.stringify(st);
  const head = `HTTP/1.1 ${st.code} ${STATUS_CODES[st.code] ?? ''}\r\n` +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  // The HTTP parser is done with this connection: what follows is drained, not parsed again.
  socket.removeAllListeners('data');
  socket.on('data', () => {});
  socket.on('error', () => {});
  socket.end(head + body);
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), RST_AVOIDANCE_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** Answers `e` on a request Node parsed, and closes the connection after it. */
export function sendStatusAndClose(res: ServerResponse, e: KdpError): void {
  const st = statusFromError(e);
  const body = JSON.stringify(st);
  res.shouldKeepAlive = false;
  res.writeHead(st.code, { 'content-type': 'application/json',
    'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}

/** The state the client-error handler needs of each connection's latest request. */
export interface RefusalTracker {
  /** Call first for every request; false when it was refused (and answered). */
  admit(req: IncomingMessage, res: ServerResponse): boolean;
  /** The server's 'clientError' listener. */
  onClientError(err: ClientError, socket: Duplex): void;
}

export function buildRefusalTracker(): RefusalTracker {
  const latest = new WeakMap<Duplex, { req: IncomingMessage; res: ServerResponse }>();
  return {
    admit(req, res) {
      latest.set(req.socket, { req, res });
      // Node's own check (requireHostHeader) answers without a body; Go's message.
      if (req.httpVersion === '1.1' && req.headers.host === undefined) {
        sendStatusAndClose(res, kdpError('KDP_BAD_REQUEST',
          'Bad Request: missing required Host header'));
        return false;
      }
      return true;
    },
    onClientError(err, socket) {
      // Socket and TLS errors (a reset, a handshake that fails or times out: https forwards
      // them here) have no HTTP answer; only the parser's (HPE_*) and its timers' do.
      const isHttpError = err.code?.startsWith('HPE_') || err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
      if (!isHttpError || socket.destroyed || !socket.writable) {
        socket.destroy();
        return;
      }
      const cur = latest.get(socket);
      // A request already answered (a 413 before its body) or a response on the wire cannot be
      // followed by another answer.
      if (cur && cur.res.headersSent && (!cur.req.complete || !cur.res.writableFinished)) {
        socket.destroy();
        return;
      }
      const receivingBody = cur !== undefined && !cur.req.complete;
      writeStatusAndClose(socket, clientErrorToKdp(err, receivingBody));
    },
  };
}

/** CONNECT (Node's 'connect' event, which nothing else answers): no route serves it. */
export function refuseConnect(_req: IncomingMessage, socket: Duplex): void {
  writeStatusAndClose(socket, methodRefused());
}

/** An `Expect` other than 100-continue (Node's 'checkExpectation'): 417 as Go answers. */
export function refuseExpectation(req: IncomingMessage, res: ServerResponse): void {
  sendStatusAndClose(res, kdpError('KDP_EXPECTATION_FAILED',
    `Expectation Failed: unsupported Expect header ${JSON.stringify(req.headers.expect)}`));
}
