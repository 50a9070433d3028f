// A loopback TCP port the kernel has just handed out and taken back. Another process may take
// it before the caller binds it, so whoever binds it must handle EADDRINUSE (pick again).

import { createServer } from 'node:net';

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, host, () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}
