// The HTTP/1.1 side of an upgrade on a raw socket: recognising WebSocket and SPDY upgrade
// requests, SPDY sub-protocol negotiation (apimachinery httpstream.Handshake), and answering a
// refusal before any protocol starts.

import { STATUS_CODES } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

export const HEADER_PROTOCOL_VERSION = 'X-Stream-Protocol-Version';
export const HEADER_ACCEPTED_PROTOCOL_VERSIONS = 'X-Accepted-Stream-Protocol-Versions';
export const SPDY_31 = 'SPDY/3.1';

function header(req: IncomingMessage, name: string): string {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(', ') : (v ?? '');
}

/** Upgrade: websocket with Connection: upgrade (wsstream.IsWebSocketRequest). */
export function isWebSocketRequest(req: IncomingMessage): boolean {
  return header(req, 'upgrade').trim().toLowerCase() === 'websocket'
    && header(req, 'connection').toLowerCase().includes('upgrade');
}

/** The comma-separated list a header carries, in order, without empties. */
export function headerList(req: IncomingMessage, name: string): string[] {
  const raw = req.headersDistinct[name.toLowerCase()] ?? [];
  return raw.flatMap((v) => v.split(',')).map((s) => s.trim()).filter((s) => s.length > 0);
}

/** Writes a complete HTTP response on the raw socket and ends it. */
export function writeResponse(
  socket: Duplex, status: number, headers: Record<string, string | string[]>, body: string,
): void {
  if (socket.destroyed) return;
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}`];
  const all: Record<string, string | string[]> = {
    ...headers, 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close',
  };
  for (const [k, v] of Object.entries(all)) {
    for (const one of Array.isArray(v) ? v : [v]) lines.push(`${k}: ${one}`);
  }
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

/** Refuses an upgrade with a Kubernetes Status body (what the kubelet/API server answer). */
export function refuseUpgrade(socket: Duplex, status: number, statusObject: object): void {
  writeResponse(socket, status, { 'Content-Type': 'application/json' },
    `${JSON.stringify(statusObject)}\n`);
}

/** Refuses with plain text as Go's http.Error does (the kubelet's streaming errors). */
export function refuseText(socket: Duplex, status: number, message: string,
  extra: Record<string, string | string[]> = {}): void {
  writeResponse(socket, status, {
    ...extra, 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff',
  }, `${message}\n`);
}

/**
 * httpstream.Handshake plus the SPDY upgrade-header check: the first client protocol (in the
 * client's order) the server accepts, or undefined after answering 400/403 as upstream.
 */
export function negotiateSpdy(
  req: IncomingMessage, socket: Duplex, serverProtocols: readonly string[],
): string | undefined {
  const values = req.headersDistinct[HEADER_PROTOCOL_VERSION.toLowerCase()];
  if (!values) {
    const count = Object.keys(req.headers).filter((k) => k !== 'host').length;
    refuseText(socket, 400, `unable to upgrade: header ${HEADER_PROTOCOL_VERSION} does not exist `
      + `in request with ${count} headers`);
    return undefined;
  }
  const client = headerList(req, HEADER_PROTOCOL_VERSION);
  if (client.length === 0) {
    refuseText(socket, 400, `unable to upgrade: header ${HEADER_PROTOCOL_VERSION} contains `
      + `[${values.join(' ')}], but no valid protocols`);
    return undefined;
  }
  const chosen = client.find((p) => serverProtocols.includes(p));
  if (!chosen) {
    refuseText(socket, 403, `unable to upgrade: unable to negotiate protocol: client supports `
      + `[${client.join(' ')}], server accepts [${serverProtocols.join(' ')}]`,
    { [HEADER_ACCEPTED_PROTOCOL_VERSIONS]: [...serverProtocols] });
    return undefined;
  }
  const connection = header(req, 'connection').toLowerCase();
  const upgrade = header(req, 'upgrade').toLowerCase();
  if (!connection.includes('upgrade') || !upgrade.includes(SPDY_31.toLowerCase())) {
    refuseText(socket, 400, 'unable to upgrade: missing upgrade headers in request: '
      + JSON.stringify(req.headersDistinct));
    return undefined;
  }
  return chosen;
}

/** Answers 101 for a negotiated SPDY/3.1 upgrade. */
export function acceptSpdy(socket: Duplex, protocol: string): void {
  socket.write(['HTTP/1.1 101 Switching Protocols', 'Connection: Upgrade',
    `Upgrade: ${SPDY_31}`, `${HEADER_PROTOCOL_VERSION}: ${protocol}`, '', ''].join('\r\n'));
}
