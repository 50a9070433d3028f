// Where a node's runtime endpoint listens, and how: a unix socket in the node's directory of the
// data dir (as containerd's /run/containerd/containerd.sock), owned by the user kdp runs as (root
// for a netns cluster) with mode 0600, so only that user reaches the node's processes through
// it. A socket left by a crashed kdp is replaced; one a live process answers on is not.

import { chmodSync, lstatSync, mkdirSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import type { Server } from 'node:http';
import { dirname, join } from 'node:path';
import { kdpError } from '../../errors.js';

export const RUNTIME_SOCKET_NAME = 'kdp-runtime.sock';
/** sun_path's limit on Linux (108 bytes with the terminating NUL). */
const MAX_SOCKET_PATH = 107;

/** `<data-dir>/nodes/<node>/kdp-runtime.sock`. */
export function runtimeEndpointPath(dataDir: string, node: string): string {
  return join(dataDir, 'nodes', node, RUNTIME_SOCKET_NAME);
}

function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

/** Listens on `path` (0600); resolves to a close function that also removes the socket. */
export async function listenRuntimeEndpoint(server: Server, path: string): Promise<() => Promise<void>> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    throw kdpError('KDP_CONFIG', `runtime endpoint ${path}: a unix socket path is limited to ${MAX_SOCKET_PATH} ` +
      'bytes (use a shorter --data-dir)');
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let stale = false;
  try { stale = lstatSync(path).isSocket(); } catch { /* none */ }
  if (stale) {
    if (await answers(path)) throw kdpError('KDP_STORE_LOCKED', `runtime endpoint ${path} is in use by a live process`);
    unlinkSync(path);
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => { server.off('error', reject); resolve(); });
  });
  chmodSync(path, 0o600);
  return () => new Promise<void>((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
    try { unlinkSync(path); } catch { /* already gone */ }
  });
}
