// Reading files named on the command line; `-` is standard input (read once).

import { readFile } from 'node:fs/promises';
import { kdpError } from '../errors.js';

let stdinText: Promise<string> | undefined;

export function readStdin(): Promise<string> {
  stdinText ??= (async () => {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  })();
  return stdinText;
}

export async function readInput(path: string, what: string): Promise<string> {
  if (path === '-') return readStdin();
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw kdpError('KDP_INPUT', `${what} ${path}: cannot read: ${(e as Error).message}`);
  }
}
