import { readFileSync } from 'node:fs';
import { buildHostExec } from '../src/host/exec.js';
import { ensureNetns, deleteNetns } from '../src/host/netns.js';
import { applyIptablesRestore } from '../src/host/rules.js';
process.on('uncaughtException', (e) => console.log('uncaught', (e as Error).message));
const exec = buildHostExec();
const ns = 'kdp-t-dbg002';
await ensureNetns(exec, ns);
try {
  await applyIptablesRestore(exec, ns, readFileSync('.tmp-iptables/1000.txt', 'utf8'));
  console.log('ok');
} catch (e) { console.log('ERR', (e as Error).message.slice(0, 500)); }
await deleteNetns(exec, ns);
