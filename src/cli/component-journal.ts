// What journald is to a unit: the standard error of a command that runs a component
// (`kdp apiserver`, `kdp controller-manager`, `kdp scheduler`, `kdp node`, `kdp node join`) is also that
// component's log in the cluster log store, through the process's spool file
// (logging/component-spool.ts) — so `kdp logs --component kubelet --node n1` shows a node run
// as its own `kdp node` process as it shows kdp up's. `kdp node` prints its kube-proxy's lines
// as `kube-proxy NODE: …`: those are kube-proxy's, the rest the kubelet's.

import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolveDataDir } from '../cluster/data-dir.js';
import { agentLine } from '../logging/component-lines.js';
import { componentLog } from '../logging/component-spool.js';
import type { ComponentName } from '../logging/record.js';
import type { CliIO, Command } from './command.js';
import type { FlagValues } from './flags.js';

interface Journal {
  readonly component: ComponentName;
  readonly node?: string;
  /** The command's own prefix, not part of the component's line. */
  readonly prefix?: RegExp;
}

const JOURNALS: Readonly<Record<string, (flags: FlagValues) => Journal | undefined>> = {
  apiserver: () => ({ component: 'apiserver', prefix: /^kdp: / }),
  'controller-manager': () => ({ component: 'controller-manager' }),
  scheduler: () => ({ component: 'scheduler' }),
  node: (f) => (typeof f.name === 'string' && f.name
    ? { component: 'kubelet', node: f.name, prefix: /^kdp node \S+: / } : undefined),
  // Its data dir is the joining host's: the cluster's collector reads the lines when that is the
  // cluster's data dir (one machine); on another host the node's log agent keeps them in its own
  // journal and ships them to the cluster's store (cluster/node-logging.ts).
  'node join': (f) => ({ component: 'kubelet', node: typeof f.name === 'string' && f.name ? f.name
    : hostname().toLowerCase(), prefix: /^kdp node (?:join )?\S+: / }),
};

/** `io` whose standard error also goes to the component's log, for commands that run one. */
export function journalIO(command: Command, flags: FlagValues, io: CliIO): CliIO {
  const journal = JOURNALS[command.name]?.(flags);
  if (!journal) return io;
  const dataDir = resolveDataDir(flags['data-dir'] as string | undefined, io.env);
  let partial = '';
  const write = (line: string) => {
    // Lines from before the command made its data dir (its refusal to start) stay on stderr.
    if (!existsSync(dataDir)) return;
    const text = journal.prefix ? line.replace(journal.prefix, '') : line;
    const agent = journal.node ? agentLine(text) : undefined;
    if (agent) componentLog(dataDir, agent.component, agent.node).line(agent.message);
    else componentLog(dataDir, journal.component, journal.node).line(text);
  };
  return {
    ...io,
    out: io.out,
    err(text) {
      io.err(text);
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      for (const l of lines) if (l) write(l);
    },
  };
}
