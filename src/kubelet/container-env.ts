// A container's environment as upstream's kubelet makes it (kubelet_pods.go
// makeEnvironmentVariables): `envFrom` sources in order (a ConfigMap's or Secret's keys, with the
// prefix), then `env` in order, later names winning; `value`s expand `$(NAME)` from what is
// defined before them (third_party/forked/golang/expansion: `$$` is a literal `$`, an unknown
// `$(X)` stays as written). valueFrom: fieldRef (metadata.name/namespace/uid, labels and
// annotations entries, spec.nodeName, spec.serviceAccountName, status.hostIP(s), status.podIP(s)),
// configMapKeyRef and secretKeyRef through `lookup`. A missing required source is an error naming
// it (upstream: CreateContainerConfigError); an optional one is skipped. The Service link
// variables (FOO_SERVICE_HOST…) are not made.

import { metadataField } from './projected.js';
import type { Container, Pod } from '../api/types.js';
import { kdpError } from '../errors.js';

export interface EnvContext {
  readonly podIPs: readonly string[];
  readonly hostIPs: readonly string[];
  readonly nodeName?: string;
  /** The data of a ConfigMap (`configmaps`) or Secret (`secrets`, base64 values) in the pod's
   *  namespace; undefined when it does not exist. Absent: every reference is an error. */
  readonly lookup?: (resource: 'configmaps' | 'secrets', name: string) =>
    Promise<Record<string, string> | undefined>;
}

/** Data of a ConfigMap or Secret as strings (Secret data is base64 in the API). */
async function sourceData(ctx: EnvContext, resource: 'configmaps' | 'secrets', name: string):
  Promise<Record<string, string> | undefined> {
  const data = ctx.lookup ? await ctx.lookup(resource, name) : undefined;
  if (!data || resource === 'configmaps') return data;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/** upstream fieldpath.ExtractFieldPathAsString plus the kubelet's podIP/hostIP/nodeName. */
export function envFieldValue(pod: Pod, fieldPath: string, ctx: EnvContext): string {
  const one = metadataField(pod, fieldPath);
  if (one !== undefined) return one;
  switch (fieldPath) {
    case 'spec.nodeName': return ctx.nodeName ?? pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName': return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP': return ctx.hostIPs[0] ?? '';
    case 'status.hostIPs': return ctx.hostIPs.join(',');
    case 'status.podIP': return ctx.podIPs[0] ?? '';
    case 'status.podIPs': return ctx.podIPs.join(',');
    default:
      throw kdpError('KDP_INVALID', `env: fieldRef fieldPath ${JSON.stringify(fieldPath)} is not supported`);
  }
}

/** `$(NAME)` expansion as upstream's expansion.Expand. */
export function expandVars(input: string, vars: ReadonlyMap<string, string>): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i]!;
    if (ch !== '$' || i + 1 >= input.length) { out += ch; continue; }
    const next = input[i + 1]!;
    if (next === '$') { out += '$'; i++; continue; }
    if (next === '(') {
      const end = input.indexOf(')', i + 2);
      if (end < 0) { out += input.slice(i); break; }
      const name = input.slice(i + 2, end);
      out += vars.has(name) ? vars.get(name)! : input.slice(i, end + 1);
      i = end;
      continue;
    }
    out += ch;
  }
  return out;
}

const CONFIG_MAP_OR_SECRET = { configMapRef: 'configmaps', secretRef: 'secrets' } as const;

/** The environment, in definition order (a Map keeps the first position of a redefined name). */
export async function containerEnv(pod: Pod, c: Container, ctx: EnvContext): Promise<Map<string, string>> {
  const vars = new Map<string, string>();
  for (const src of c.envFrom ?? []) {
    for (const key of ['configMapRef', 'secretRef'] as const) {
      const ref = src[key];
      if (!ref) continue;
      const resource = CONFIG_MAP_OR_SECRET[key];
      const data = await sourceData(ctx, resource, ref.name ?? '');
      if (!data) {
        if (ref.optional) continue;
        throw kdpError('KDP_NOT_FOUND', `container ${c.name}: envFrom ${key}: ` +
          `${resource === 'configmaps' ? 'configmap' : 'secret'} "${ref.name ?? ''}" not found`);
      }
      for (const [k, v] of Object.entries(data)) vars.set(`${src.prefix ?? ''}${k}`, v);
    }
  }
  for (const e of c.env ?? []) {
    const from = e.valueFrom;
    if (!from) { vars.set(e.name, expandVars(e.value ?? '', vars)); continue; }
    if (from.fieldRef) { vars.set(e.name, envFieldValue(pod, from.fieldRef.fieldPath, ctx)); continue; }
    const keyRef = from.configMapKeyRef ?? from.secretKeyRef;
    if (keyRef) {
      const resource = from.configMapKeyRef ? 'configmaps' : 'secrets';
      const kind = resource === 'configmaps' ? 'configmap' : 'secret';
      const data = await sourceData(ctx, resource, keyRef.name ?? '');
      const value = data?.[keyRef.key];
      if (value === undefined) {
        if (keyRef.optional) continue;
        throw kdpError('KDP_NOT_FOUND', `container ${c.name}: env ${e.name}: ` + (data
          ? `couldn't find key ${keyRef.key} in ${kind} ${pod.metadata.namespace ?? 'default'}/${keyRef.name}`
          : `${kind} "${keyRef.name ?? ''}" not found`));
      }
      vars.set(e.name, value);
      continue;
    }
    if (from.resourceFieldRef) {
      throw kdpError('KDP_INVALID', `container ${c.name}: env ${e.name}: resourceFieldRef is not supported`);
    }
  }
  return vars;
}
