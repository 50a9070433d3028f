// The native plugin's wire format (native/kdp-cni-shim.c): netstrings, `<decimal length>:<bytes>,`.
// Request: "kdp-cni/1", one "CNI_NAME=value" per CNI_* variable, "" (end of the environment),
// then the stdin bytes. Answer: the exit code (decimal), stdout, stderr. A request is read
// whole (the shim half-closes after it); anything malformed or over the size bound is refused
// with a message that names what was wrong.

import { kdpError } from '../errors.js';
import type { CniInvocation, CniOutcome } from './plugin.js';

export const SHIM_PROTOCOL = 'kdp-cni/1';
/** CNI configs are kilobytes; a request larger than this is not one. */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

export function netstring(b: Buffer | string): Buffer {
  const body = typeof b === 'string' ? Buffer.from(b, 'utf8') : b;
  return Buffer.concat([Buffer.from(`${body.length}:`, 'ascii'), body, Buffer.from(',', 'ascii')]);
}

/** Splits a buffer into its netstrings; throws at the first malformed one, naming its offset. */
export function parseNetstrings(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let i = 0;
  while (i < buf.length) {
    const colon = buf.indexOf(0x3a, i);
    const digits = colon < 0 ? '' : buf.toString('ascii', i, colon);
    if (!/^\d{1,12}$/.test(digits)) throw kdpError('KDP_BAD_REQUEST', `kdp-cni request: no netstring length at byte ${i}`);
    const len = Number(digits);
    const start = colon + 1;
    if (start + len >= buf.length) {
      throw kdpError('KDP_BAD_REQUEST', `kdp-cni request: netstring at byte ${i} runs past the end`);
    }
    if (buf[start + len] !== 0x2c) throw kdpError('KDP_BAD_REQUEST', `kdp-cni request: netstring at byte ${i} lacks its ','`);
    out.push(buf.subarray(start, start + len));
    i = start + len + 1;
  }
  return out;
}

export function encodeRequest(inv: CniInvocation): Buffer {
  const parts = [netstring(SHIM_PROTOCOL)];
  for (const [k, v] of Object.entries(inv.env)) {
    if (k.startsWith('CNI_') && v !== undefined) parts.push(netstring(`${k}=${v}`));
  }
  parts.push(netstring(''), netstring(inv.stdin));
  return Buffer.concat(parts);
}

export function decodeRequest(buf: Buffer): CniInvocation {
  const parts = parseNetstrings(buf);
  if (parts[0]?.toString('utf8') !== SHIM_PROTOCOL) {
    throw kdpError('KDP_BAD_REQUEST', `kdp-cni request: protocol ${JSON.stringify(parts[0]?.toString('utf8') ?? '')} is not ${SHIM_PROTOCOL}`);
  }
  const env: Record<string, string> = {};
  let i = 1;
  for (; i < parts.length && parts[i]!.length > 0; i++) {
    const kv = parts[i]!.toString('utf8');
    const eq = kv.indexOf('=');
    if (eq < 0 || !kv.startsWith('CNI_')) throw kdpError('KDP_BAD_REQUEST', `kdp-cni request: ${JSON.stringify(kv.slice(0, 40))} is not a CNI_ variable`);
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  if (i !== parts.length - 2) throw kdpError('KDP_BAD_REQUEST', 'kdp-cni request: expected the environment, an empty netstring, then stdin');
  return { env, stdin: parts[i + 1]!.toString('utf8') };
}

export function encodeAnswer(o: CniOutcome): Buffer {
  return Buffer.concat([netstring(String(o.exitCode)), netstring(o.stdout), netstring(o.stderr)]);
}

export function decodeAnswer(buf: Buffer): CniOutcome {
  const [code, stdout, stderr, ...rest] = parseNetstrings(buf);
  if (!stderr || rest.length) throw kdpError('KDP_BAD_REQUEST', 'kdp-cni answer: expected exit code, stdout and stderr');
  return { exitCode: Number(code!.toString('ascii')), stdout: stdout.toString('utf8'), stderr: stderr.toString('utf8') };
}
