// The node agent's CNI service: where the native plugin (native/kdp-cni-shim.c) hands its
// requests. One unix socket per node namespace, `<socketDir>/<inode of the namespace>.sock`,
// mode 0600 in a 0700 directory (only root reaches it, as only root may run CNI plugins). Each
// connection carries one request (shim-protocol.ts), run by the same in-process plugin the
// kubelet uses, so an exec'd ADD and an in-process ADD cannot differ.

import { chmodSync, statSync, unlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { ensurePrivateDirSync } from '../util/private-files.js';
import type { CniInvocation, CniOutcome } from './plugin.js';
import { decodeRequest, encodeAnswer, MAX_REQUEST_BYTES } from './shim-protocol.js';
import { CNI_CODES, CniError, goJSON } from './spec.js';

export interface CniServiceOptions {
  readonly socketDir: string;
  /** The node namespace's file (`/run/netns/NAME`): its inode names the socket. */
  readonly netnsPath: string;
  run(inv: CniInvocation): Promise<CniOutcome>;
}

export interface CniService {
  readonly path: string;
  close(): Promise<void>;
}

export function cniSocketPath(socketDir: string, netnsPath: string): string {
  return join(socketDir, `${statSync(netnsPath).ino}.sock`);
}

function failure(code: number, msg: string): CniOutcome {
  return { exitCode: 1, stdout: goJSON(new CniError(code, msg).toJSON()), stderr: '' };
}

export async function serveCni(o: CniServiceOptions): Promise<CniService> {
  ensurePrivateDirSync(o.socketDir);
  const path = cniSocketPath(o.socketDir, o.netnsPath);
  // A socket file left by a crashed agent refuses connections; it is replaced.
  try { unlinkSync(path); } catch { /* none */ }
  const open = new Set<import('node:net').Socket>();
  // allowHalfOpen: the shim half-closes after its request and reads the answer after that.
  const server: Server = createServer({ allowHalfOpen: true }, (conn) => {
    open.add(conn);
    conn.on('close', () => open.delete(conn));
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    conn.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_REQUEST_BYTES && !refused) {
        refused = true;
        conn.end(encodeAnswer(failure(CNI_CODES.decodingFailure, `kdp-cni request over ${MAX_REQUEST_BYTES} bytes`)));
        return;
      }
      if (!refused) chunks.push(c);
    });
    conn.on('end', () => {
      if (refused) return;
      let inv: CniInvocation;
      try {
        inv = decodeRequest(Buffer.concat(chunks));
      } catch (e) {
        conn.end(encodeAnswer(failure(CNI_CODES.decodingFailure, (e as Error).message)));
        return;
      }
      o.run(inv).then(
        (out) => conn.end(encodeAnswer(out)),
        (e) => conn.end(encodeAnswer(failure(CNI_CODES.internal, (e as Error).message))),
      );
    });
    conn.on('error', () => conn.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // The directory is 0700; the socket is made 0600 as well before anyone is told of it.
    server.listen(path, () => { server.off('error', reject); resolve(); });
  });
  chmodSync(path, 0o600);
  return {
    path,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const c of open) c.destroy(); // a request cut short: the shim prints a CNI error
      try { unlinkSync(path); } catch { /* gone */ }
    }),
  };
}
