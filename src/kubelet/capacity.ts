// What a node reports as capacity. A node that runs real processes (netns mode) reports the
// machine's own CPUs and memory, as every kind node reports its host's: the nodes share one
// machine, and that is what their pods compete for. A virtual node reports a fixed, documented
// shape (4 CPUs, 8 Gi) so that scheduling in virtual mode does not depend on the machine.

import { cpus, totalmem } from 'node:os';

export interface NodeCapacity {
  readonly cpu: string;
  readonly memory: string;
}

export const VIRTUAL_NODE_CAPACITY: NodeCapacity = { cpu: '4', memory: '8Gi' };

/** The machine's CPUs (count) and memory (`MemTotal` in Ki, as cAdvisor reports it). */
export function hostCapacity(): NodeCapacity {
  return { cpu: String(Math.max(1, cpus().length)), memory: `${Math.floor(totalmem() / 1024)}Ki` };
}
