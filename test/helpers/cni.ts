// Builders for CNI plugin tests: configs, environments and an in-process invoker.

import type { HostExec } from '../../src/host/exec.js';
import { runCniPlugin, type CniOutcome } from '../../src/cni/plugin.js';

export function bridgeConf(over: Record<string, unknown> = {}, ipamOver: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cniVersion: '1.0.0',
    name: 'kdptest',
    type: 'kdp-cni',
    bridge: 'kdp-br0',
    isGateway: true,
    ipMasq: false,
    hairpinMode: true,
    ipam: {
      type: 'host-local',
      dataDir: '/tmp/kdp-cni-unused',
      ranges: [[{ subnet: '10.244.1.0/24' }]],
      routes: [{ dst: '0.0.0.0/0' }],
      ...ipamOver,
    },
    ...over,
  };
}

export function cniEnv(command: string, over: Record<string, string> = {}): Record<string, string> {
  return {
    CNI_COMMAND: command,
    CNI_CONTAINERID: 'ctr1',
    CNI_NETNS: '/run/netns/none',
    CNI_IFNAME: 'eth0',
    CNI_PATH: '/usr/lib/cni',
    ...over,
  };
}

export async function invoke(
  exec: HostExec,
  nodeNetns: string | undefined,
  env: Record<string, string>,
  conf: unknown,
): Promise<CniOutcome & { json?: any }> {
  const stdin = typeof conf === 'string' ? conf : JSON.stringify(conf);
  const out = await runCniPlugin({ env, stdin }, { exec, node: { name: nodeNetns } });
  let json: unknown;
  try {
    json = out.stdout ? JSON.parse(out.stdout) : undefined;
  } catch {
    json = undefined;
  }
  return { ...out, json };
}
