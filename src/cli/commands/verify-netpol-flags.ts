// The `kdp verify` flags of `--netpol` (kept apart so verify.ts loads the netpol code only
// when the flag is given).

import type { FlagSpec } from '../flags.js';

export const NETPOL_FLAGS: readonly FlagSpec[] = [
  { name: 'netpol', type: 'boolean',
    help: 'print the NetworkPolicy reachability truth table per port/protocol (offline)' },
  { name: 'ports', type: 'string',
    help: 'with --netpol: e.g. 80/TCP,81/UDP (default: every declared container port)' },
  { name: 'filename', short: 'f', type: 'string',
    help: 'with --netpol: read objects from this manifest (- for stdin) instead of the cluster; '
      + 'validated as the API server would' },
  { name: 'via-service', type: 'boolean',
    help: 'with --netpol --live: probe each pod through a Service that leads only to it (its '
      + 'ClusterIP, as upstream\'s e2e), where there is one' },
  { name: 'probe-timeout', type: 'number',
    help: 'with --netpol --live: ms a probe waits for an answer (default 1000; a blocked cell '
      + 'computed as allowed is retried with twice that)' },
  { name: 'parallel', type: 'number', help: 'with --netpol --live: probes in flight (default 64)' },
];
