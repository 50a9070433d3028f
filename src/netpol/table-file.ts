// The node's last applied `inet kdp-netpol` table, kept beside kube-proxy's rule history in the
// data dir (`nodes/<node>/rules/netpol.nft`), so `kdp rules --node N --netpol` shows it in both
// modes without entering the node's namespace. Written atomically after each successful apply.

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRIVATE_DIR_MODE, writePrivateFileSync } from '../util/private-files.js';

export const NETPOL_TABLE_FILE = 'netpol.nft';

export function writeNetpolTable(rulesDir: string, text: string): void {
  mkdirSync(rulesDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  writePrivateFileSync(join(rulesDir, NETPOL_TABLE_FILE), text, { atomic: true });
}

/** The text last applied on the node, or undefined when its controller never applied one. */
export function readNetpolTable(rulesDir: string): string | undefined {
  const f = join(rulesDir, NETPOL_TABLE_FILE);
  return existsSync(f) ? readFileSync(f, 'utf8') : undefined;
}
