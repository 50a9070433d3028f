// `kdp rules compile`: offline, no cluster. Kubernetes YAML in, what kube-proxy would apply out.

import { applyDefaults } from '../../api/defaults.js';
import { describeSource, loadObjectsFromFiles, loadObjectsFromText } from '../../api/load.js';
import { validate } from '../../api/validation/index.js';
import type { KubeObject } from '../../api/types.js';
import { kdpError } from '../../errors.js';
import type { ProxyMode } from '../../proxy/backend.js';
import { compileOffline } from '../../proxy/compile.js';
import type { Command } from '../command.js';
import { readInput } from '../read-input.js';

const MODES: readonly ProxyMode[] = ['iptables', 'nftables', 'ipvs'];

export function parseMode(v: unknown, flag = '--mode'): ProxyMode | undefined {
  if (v === undefined) return undefined;
  if (!MODES.includes(v as ProxyMode)) {
    throw kdpError('KDP_CONFIG', `${flag}: "${String(v)}" is not one of ${MODES.join(', ')}`);
  }
  return v as ProxyMode;
}

/**
 * Reads manifests as the API server would store them: defaulted, then validated. kube-proxy only
 * ever sees stored objects, so an object the API server would refuse (a missing required field,
 * a bad IP) is an input error naming the document and fields — and nothing is printed.
 */
export async function loadManifests(paths: readonly string[]): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const p of paths) {
    const loaded = p === '-'
      ? loadObjectsFromText(await readInput('-', '-f'), '<stdin>')
      : await loadObjectsFromFiles([p]);
    for (const l of loaded) {
      applyDefaults(l.object);
      const causes = validate(l.object);
      if (causes.length > 0) {
        const name = `${l.object.kind} ${l.object.metadata?.namespace ? `${l.object.metadata.namespace}/` : ''}${l.object.metadata?.name ?? ''}`;
        throw kdpError('KDP_INPUT', `${describeSource(l.source)}: ${name} is invalid: ` +
          causes.map((c) => `${c.field}: ${c.message}`).join('; '), { causes });
      }
      out.push(l.object);
    }
  }
  return out;
}

export const rulesCompileCommand: Command = {
  name: 'rules compile',
  summary: 'compile kube-proxy rule tables from Kubernetes YAML, offline (no cluster needed)',
  flags: [
    { name: 'filename', short: 'f', type: 'strings', help: 'manifest file or directory (- for stdin); repeatable' },
    { name: 'mode', type: 'string', help: 'iptables | nftables | ipvs (default: the config\'s mode, else iptables)' },
    { name: 'config', type: 'string', help: 'a KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) file' },
    { name: 'kube-proxy-config', type: 'string', help: 'the same as --config' },
    { name: 'node-name', type: 'string', default: 'node-a', help: 'the node this kube-proxy runs on' },
    { name: 'node-ip', type: 'strings', help: 'the node\'s IPs (repeatable; one proxier per family)' },
    { name: 'pod-cidr', type: 'strings', help: 'the node\'s pod CIDRs (for detectLocalMode NodeCIDR)' },
    { name: 'random-fully', type: 'boolean', default: false, help: 'the target kernel supports MASQUERADE --random-fully' },
    { name: 'nfacct', type: 'boolean', default: false, help: 'the target kernel has nfacct (localhost node-port counters)' },
    { name: 'canonical', type: 'boolean', default: false, help: 'print in the canonical order upstream tests compare in' },
  ],
  async run(args, io) {
    const mode = parseMode(args.flags.mode);
    const files = (args.flags.filename as string[] | undefined) ?? [];
    if (files.length === 0) throw kdpError('KDP_CONFIG', '-f: at least one manifest file is required');
    const configFlag = args.flags.config ? 'config' : 'kube-proxy-config';
    const configText = args.flags[configFlag]
      ? await readInput(args.flags[configFlag] as string, `--${configFlag}`)
      : undefined;
    const text = await compileOffline({
      objects: await loadManifests(files),
      configText,
      mode,
      nodeName: args.flags['node-name'] as string,
      nodeIPs: (args.flags['node-ip'] as string[] | undefined) ?? ['172.18.0.2'],
      podCIDRs: args.flags['pod-cidr'] as string[] | undefined,
      // ipvs output is only readable with its section headers (the canonical form).
      canonical: (args.flags.canonical as boolean) || (mode ?? 'iptables') === 'ipvs',
      capabilities: { randomFully: args.flags['random-fully'] as boolean, nfacct: args.flags.nfacct as boolean },
    });
    io.out(text);
    return 0;
  },
};
