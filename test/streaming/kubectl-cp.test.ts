// Real `kubectl cp` (tar over exec: stdin's end must reach tar) both ways; the "container" is
// the host, so the pod paths are a temporary directory.

import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childProcessStream } from '../../src/streaming/fakes.js';
import { kubectlMissing, startStreamServer } from './helpers/stream-server.js';
import type { StreamServer } from './helpers/stream-server.js';

let server: StreamServer;
beforeAll(async () => {
  server = await startStreamServer({ start: (_kind, argv, opts) => childProcessStream(argv, opts) });
});
afterAll(async () => { await server.close(); });

describe.each([27, 33])('kubectl 1.%i cp', (minor) => {
  it.skipIf(kubectlMissing(minor))('copies a file into the pod and back unchanged', async () => {
    const data = randomBytes(2 * 1024 * 1024);
    const local = join(server.dir, `local-${minor}.bin`);
    const podDir = join(server.dir, `pod-${minor}`);
    await mkdir(podDir);
    await writeFile(local, data);

    const up = await server.kubectl(minor, ['cp', local, `p:${podDir}/in.bin`], { timeoutMs: 30_000 });
    expect(up.stderr).toBe('');
    expect(up.code).toBe(0);
    expect((await readFile(join(podDir, 'in.bin'))).equals(data)).toBe(true);

    const back = join(server.dir, `back-${minor}.bin`);
    const down = await server.kubectl(minor, ['cp', `p:${podDir}/in.bin`, back], { timeoutMs: 30_000 });
    expect(down.code).toBe(0);
    expect((await readFile(back)).equals(data)).toBe(true);
  }, 60_000);
});
