import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBridgeCache } from '../../src/cni/bridge-state.js';
import { execPlugin } from '../../src/cni/exec-plugin.js';
import type { CniInvocation } from '../../src/cni/plugin.js';
import { runCniPlugin } from '../../src/cni/plugin.js';
import { buildCniShim, cniSocketDir } from '../../src/cni/shim-build.js';
import {
  decodeAnswer, decodeRequest, encodeAnswer, encodeRequest, MAX_REQUEST_BYTES, netstring, parseNetstrings,
} from '../../src/cni/shim-protocol.js';
import { serveCni } from '../../src/cni/shim-service.js';
import { isKdpError } from '../../src/errors.js';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../../src/host/netns.js';
import { bridgeConf, cniEnv } from '../helpers/cni.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';
import { hasCompiler } from '../helpers/native.js';

describe('kdp-cni shim wire format', () => {
  it('round-trips a request: only CNI_* variables, stdin bytes intact', () => {
    const inv = { env: { CNI_COMMAND: 'ADD', CNI_ARGS: 'K8S_POD_NAME=a;X=b=c', PATH: '/bin', CNI_IFNAME: 'eth0' },
      stdin: '{"name":"ünï","x":","}' };
    const back = decodeRequest(encodeRequest(inv));
    expect(back).toEqual({ env: { CNI_COMMAND: 'ADD', CNI_ARGS: 'K8S_POD_NAME=a;X=b=c', CNI_IFNAME: 'eth0' }, stdin: inv.stdin });
  });

  it('round-trips an answer', () => {
    expect(decodeAnswer(encodeAnswer({ exitCode: 1, stdout: '{"code":7}', stderr: 'x\n' })))
      .toEqual({ exitCode: 1, stdout: '{"code":7}', stderr: 'x\n' });
  });

  it.each([
    ['no length', Buffer.from('x:abc,'), /no netstring length at byte 0/],
    ['too long', Buffer.from('9:abc,'), /netstring at byte 0 runs past the end/],
    ['no comma', Buffer.from('3:abcd'), /netstring at byte 0 lacks its ','/],
    ['second one bad', Buffer.concat([netstring('kdp-cni/1'), Buffer.from('2:ab')]), /at byte 12 runs past the end/],
  ])('refuses a malformed netstring (%s), naming the byte', (_, buf, re) => {
    expect(() => parseNetstrings(buf)).toThrow(re);
  });

  it('refuses another protocol, a non-CNI variable, and a missing stdin', () => {
    expect(() => decodeRequest(Buffer.concat([netstring('kdp-cni/2'), netstring(''), netstring('')])))
      .toThrow(/protocol "kdp-cni\/2" is not kdp-cni\/1/);
    expect(() => decodeRequest(Buffer.concat([netstring('kdp-cni/1'), netstring('PATH=/bin'), netstring(''), netstring('')])))
      .toThrow(/"PATH=\/bin" is not a CNI_ variable/);
    expect(() => decodeRequest(Buffer.concat([netstring('kdp-cni/1'), netstring('CNI_COMMAND=ADD')])))
      .toThrow(/expected the environment, an empty netstring, then stdin/);
    try { decodeRequest(Buffer.from('zz')); } catch (e) { expect(isKdpError(e, 'KDP_BAD_REQUEST')).toBe(true); }
  });
});

interface Ran { code: number; stdout: string; stderr: string }
/** Execs the plugin as a runtime does (the product's own execPlugin), in `netns` when given. */
async function runShim(file: string, env: Record<string, string>, stdin: string, netns?: string): Promise<Ran> {
  const o = await execPlugin({ command: [file], env: { HOME: '/nonexistent', ...env }, stdin, netns, timeoutMs: 30_000 });
  return { code: o.exitCode, stdout: o.stdout, stderr: o.stderr };
}

// The shim finds its agent by the inode of its own network namespace; in this process's
// namespace the service listens for /proc/self/ns/net, so no root is needed.
describe.runIf(hasCompiler())('the native kdp-cni (built with the machine\'s C compiler)', () => {
  let dir = '';
  let shim = '';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kdp-shim-'));
    const built = await buildCniShim(dir);
    if (!built.ok) throw new Error(built.reason);
    shim = built.file;
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('hands the CNI_* environment and stdin to the agent and prints its answer with its exit code', async () => {
    const seen: CniInvocation[] = [];
    const svc = await serveCni({ socketDir: cniSocketDir(dir), netnsPath: '/proc/self/ns/net',
      run: async (inv) => { seen.push(inv); return { exitCode: 7, stdout: `out:${inv.stdin.length}`, stderr: 'err\n' }; } });
    try {
      const stdin = JSON.stringify({ big: 'x'.repeat(200_000) });
      const r = await runShim(shim, { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_ARGS: 'A=1;B=2', SECRET: 's' }, stdin);
      expect(r).toEqual({ code: 7, stdout: `out:${stdin.length}`, stderr: 'err\n' });
      expect(seen).toHaveLength(1);
      expect(seen[0]!.env).toEqual({ CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_ARGS: 'A=1;B=2' });
      expect(seen[0]!.stdin).toBe(stdin);
      // VERSION reads no stdin (a caller may leave it open), as the Node plugin.
      const v = await runShim(shim, { CNI_COMMAND: 'VERSION' }, '{"cniVersion":"1.0.0"}');
      expect(v.code).toBe(7);
      expect(seen[1]!.stdin).toBe('');
    } finally {
      await svc.close();
    }
  });

  it('keeps its socket root-only: 0600 in a 0700 directory', async () => {
    const svc = await serveCni({ socketDir: cniSocketDir(dir), netnsPath: '/proc/self/ns/net',
      run: async () => ({ exitCode: 0, stdout: '', stderr: '' }) });
    try {
      expect(statSync(svc.path).mode & 0o777).toBe(0o600);
      expect(statSync(cniSocketDir(dir)).mode & 0o777).toBe(0o700);
      expect(svc.path).toBe(join(cniSocketDir(dir), `${statSync('/proc/self/ns/net').ino}.sock`));
    } finally {
      await svc.close();
    }
  });

  it('without an agent, runs the full Node plugin with stdin untouched', async () => {
    const v = await runShim(shim, { CNI_COMMAND: 'VERSION' }, '');
    expect(v.code).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ cniVersion: '1.1.0' });
    // A bad config reaches the Node plugin whole: its own decoding error, not the shim's.
    const bad = await runShim(shim, cniEnv('ADD'), '{"cniVersion":"1.0.0","name":"x","type":"kdp-cni","bridge":');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ code: 6 });
  });

  it('an agent that goes away mid-request gives a CNI error, not a hang or a half answer', async () => {
    const svc = await serveCni({ socketDir: cniSocketDir(dir), netnsPath: '/proc/self/ns/net',
      run: () => new Promise(() => undefined) });
    const pending = runShim(shim, cniEnv('ADD'), '{}');
    await new Promise((r) => setTimeout(r, 300));
    await svc.close();
    const r = await pending;
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ code: 999, msg: "kdp-cni: the node agent's answer was cut short" });
  });

  it('a malformed or oversized request is answered with a decoding error', async () => {
    const svc = await serveCni({ socketDir: cniSocketDir(dir), netnsPath: '/proc/self/ns/net',
      run: async () => ({ exitCode: 0, stdout: 'never', stderr: '' }) });
    try {
      const { connect } = await import('node:net');
      const ask = (payload: Buffer) => new Promise<Buffer>((resolve) => {
        const chunks: Buffer[] = [];
        const c = connect(svc.path, () => c.end(payload));
        c.on('data', (d) => chunks.push(d));
        c.on('close', () => resolve(Buffer.concat(chunks)));
        c.on('error', () => undefined);
      });
      const bad = decodeAnswer(await ask(Buffer.from('hello')));
      expect(bad.exitCode).toBe(1);
      expect(JSON.parse(bad.stdout)).toMatchObject({ code: 6, msg: expect.stringContaining('no netstring length') });
      const big = decodeAnswer(await ask(Buffer.alloc(MAX_REQUEST_BYTES + 10, 0x31)));
      expect(JSON.parse(big.stdout)).toMatchObject({ code: 6, msg: expect.stringContaining('over') });
    } finally {
      await svc.close();
    }
  });
});

const exec = buildHostExec();
const prefix = testNetnsName();
describe.runIf(hasCompiler() && canUseNetns(['ip', 'nsenter']))('the native kdp-cni against a node agent (root)', () => {
  let dir = '';
  let shim = '';
  const ns = { node: `${prefix}-sn`, a: `${prefix}-sa`, b: `${prefix}-sb` };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kdp-shim-root-'));
    const built = await buildCniShim(dir);
    if (!built.ok) throw new Error(built.reason);
    shim = built.file;
    for (const n of Object.values(ns)) await ensureNetns(exec, n);
  }, 60_000);
  afterAll(async () => {
    for (const n of Object.values(ns)) await deleteNetns(exec, n);
    rmSync(dir, { recursive: true, force: true });
  });

  it('ADD, CHECK and DEL exec\'d in the node namespace give what the in-process plugin gives', async () => {
    const bridgeCache = buildBridgeCache();
    const svc = await serveCni({ socketDir: cniSocketDir(dir), netnsPath: `/run/netns/${ns.node}`,
      run: (inv) => runCniPlugin(inv, { exec, node: { name: ns.node }, bridgeCache }) });
    try {
      const conf = JSON.stringify(bridgeConf({ bridge: 'kdp-shim0' }, { dataDir: join(dir, 'ipam') }));
      const env = (cmd: string, id: string, pod: string) => cniEnv(cmd, { CNI_CONTAINERID: id, CNI_NETNS: `/run/netns/${pod}` });
      const viaShim = await runShim(shim, env('ADD', 'a', ns.a), conf, ns.node);
      expect(viaShim.code, viaShim.stdout).toBe(0);
      const direct = await runCniPlugin({ env: env('ADD', 'b', ns.b), stdin: conf }, { exec, node: { name: ns.node } });
      expect(direct.exitCode, direct.stdout).toBe(0);
      const a = JSON.parse(viaShim.stdout);
      const b = JSON.parse(direct.stdout);
      expect(a.ips[0].address).toBe('10.244.1.2/24');
      expect(b.ips[0].address).toBe('10.244.1.3/24');
      expect(a.routes).toEqual(b.routes);
      expect(a.interfaces.length).toBe(b.interfaces.length);
      const { stdout } = await exec.run('ip', ['netns', 'exec', ns.a, 'ip', '-4', '-o', 'addr', 'show', 'eth0']);
      expect(stdout).toContain('10.244.1.2/24');
      const check = await runShim(shim, env('CHECK', 'a', ns.a), JSON.stringify({ ...JSON.parse(conf), prevResult: a }), ns.node);
      expect(check.code, check.stdout).toBe(0);
      const del = await runShim(shim, env('DEL', 'a', ns.a), conf, ns.node);
      expect(del.code, del.stdout).toBe(0);
      const after = await exec.run('ip', ['netns', 'exec', ns.a, 'ip', '-o', 'link', 'show']);
      expect(after.stdout).not.toContain('eth0');
    } finally {
      await svc.close();
    }
  });
});
