// `kdp-cni`: the CNI plugin executable. Runs in the node's namespace, as runtimes exec plugins.
import { buildHostExec } from '../host/exec.js';
import { runCniPlugin } from './plugin.js';

export async function main(): Promise<number> {
  const stdin = process.env.CNI_COMMAND === 'VERSION' ? '' : await readStdin();
  const out = await runCniPlugin({ env: process.env, stdin }, { exec: buildHostExec(), node: {} });
  process.stdout.write(out.stdout);
  process.stderr.write(out.stderr);
  return out.exitCode;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
