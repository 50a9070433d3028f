// `kdp rules compile`: offline, no cluster. Kubernetes YAML in, what kube-proxy would apply out.

import { applyDefaults } from '../../api/defaults.js';
import {
  describeSource, loadObjectsFromFiles, loadObjectsFromText, type LoadedObject,
} from '../../api/load.js';
import { isCIDR } from '../../api/net.js';
import { decodeTypes } from '../../api/schema/index.js';
import { validate } from '../../api/validation/index.js';
import type { KubeObject } from '../../api/types.js';
import { isKdpError, kdpError, type Cause } from '../../errors.js';
import type { ProxyMode } from '../../proxy/backend.js';
import { compileOffline } from '../../proxy/compile.js';
import { DEFAULT_PROXY_MODE, isProxyMode, proxyMode, proxyModeNames } from '../../proxy/registry.js';
import type { Command } from '../command.js';
import { readInput } from '../read-input.js';

export function parseMode(v: unknown, flag = '--mode'): ProxyMode | undefined {
  if (v === undefined) return undefined;
  if (!isProxyMode(v)) {
    throw kdpError('KDP_CONFIG', `${flag}: "${String(v)}" is not one of ${proxyModeNames().join(', ')}`);
  }
  return v;
}

/**
 * Reads manifests as the API server would store them: decoded as their Go types, defaulted,
 * then validated by the API's own entry points (`decodeTypes`, `validate`, and for a Service
 * with a status the status-subresource check),
 * plus the range checks the API server's allocators make (a nodePort is a port number).
 * kube-proxy only ever sees stored objects, so an object the API server would refuse (a missing
 * required field, a bad IP, a value of the wrong type) is KDP_INPUT naming the file, document
 * and fields — and nothing is printed.
 */
export async function loadManifests(paths: readonly string[]): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const p of paths) {
    const loaded = p === '-'
      ? loadObjectsFromText(await readInput('-', '-f'), '<stdin>')
      : await loadObjectsFromFiles([p]);
    for (const l of loaded) {
      checkStored(l);
      out.push(l.object);
    }
  }
  return out;
}

function checkStored(l: LoadedObject): void {
  const o = l.object;
  const meta = isRecord(o.metadata) ? o.metadata : {};
  const ns = typeof meta.namespace === 'string' && meta.namespace ? `${meta.namespace}/` : '';
  const label = `${describeSource(l.source)}: ${o.kind} ${ns}${String(meta.name ?? '')}`;
  // As the API server: values are decoded as their Go types first (a wrong type is refused
  // naming the field), then defaulted, then validated.
  const typeProblem = decodeTypes(o.apiVersion ?? '', o.kind ?? '', o);
  if (typeProblem) {
    throw kdpError('KDP_INPUT', `${label}: cannot be handled as a ${o.kind}: ` +
      `${typeProblem.field}: ${typeProblem.message}`, { causes: [{ field: typeProblem.field,
      reason: 'FieldValueTypeInvalid', message: typeProblem.message }] });
  }
  // Defaulting walks the shape; should it still throw, validation names the field if it can.
  let shapeError: Error | undefined;
  try {
    applyDefaults(o);
  } catch (e) {
    if (isKdpError(e)) throw e;
    shapeError = e as Error;
  }
  let causes: Cause[];
  try {
    causes = [...validate(o), ...statusCauses(o), ...nodePortCauses(o)];
  } catch (e) {
    if (isKdpError(e)) throw e;
    shapeError ??= e as Error;
    causes = [];
  }
  if (causes.length > 0) {
    throw kdpError('KDP_INPUT', `${label} is invalid: ` +
      causes.map((c) => `${c.field}: ${c.message}`).join('; '), { causes });
  }
  if (shapeError) {
    throw kdpError('KDP_INPUT', `${label}: cannot be handled as a ${o.kind}: a field has the ` +
      'wrong type (a list, object, string or number where another belongs)', {}, shapeError);
  }
}

/** A Service's status as if written through the status subresource (kube-proxy reads it). */
function statusCauses(o: KubeObject): Cause[] {
  if (o.apiVersion !== 'v1' || o.kind !== 'Service' || !isRecord(o.status)) return [];
  return validate(o, o, { subresource: 'status' });
}

/**
 * The API server's NodePort allocator refuses a port outside its range before validation runs;
 * offline there is no range, but a nodePort must still be a port number.
 */
function nodePortCauses(o: KubeObject): Cause[] {
  if (o.apiVersion !== 'v1' || o.kind !== 'Service' || !isRecord(o.spec)) return [];
  const spec = o.spec;
  const ports = Array.isArray(spec.ports) ? spec.ports : [];
  const fields: [string, unknown][] = ports.map((p, i) =>
    [`spec.ports[${i}].nodePort`, isRecord(p) ? p.nodePort : undefined]);
  fields.push(['spec.healthCheckNodePort', spec.healthCheckNodePort]);
  return fields.flatMap(([field, v]) => {
    if (v === undefined || v === null || v === 0) return [];
    if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535) return [];
    return [{ field, reason: 'FieldValueInvalid',
      message: `Invalid value: ${JSON.stringify(v)}: must be between 1 and 65535, inclusive` }];
  });
}

function podCIDRsFlag(v: string[] | undefined): string[] | undefined {
  for (const c of v ?? []) {
    if (!isCIDR(c)) throw kdpError('KDP_CONFIG', `--pod-cidr: "${c}" is not a CIDR`);
  }
  return v;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const rulesCompileCommand: Command = {
  name: 'rules compile',
  summary: 'compile kube-proxy rule tables from Kubernetes YAML, offline (no cluster needed)',
  flagFile: false,
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
      podCIDRs: podCIDRsFlag(args.flags['pod-cidr'] as string[] | undefined),
      // ipvs output is only readable with its section headers (the canonical form).
      canonical: (args.flags.canonical as boolean) || proxyMode(mode ?? DEFAULT_PROXY_MODE).canonicalByDefault,
      capabilities: { randomFully: args.flags['random-fully'] as boolean, nfacct: args.flags.nfacct as boolean },
    });
    io.out(text);
    return 0;
  },
};
