// Pod and PodSpec validation as upstream pkg/apis/core/validation (v1.33): the parts that
// matter to networking and scheduling (containers, ports, policies, tolerations, DNS, IPs) with
// upstream field paths and wording. Volume sources, probes and security contexts are not checked.

import type {
  Container, Pod, PodSpec, PodTemplateSpec, Toleration,
} from '../types.js';
import {
  type Cause, duplicate, forbidden, invalid, notSupported, required, invalidEach,
} from './field-errors.js';
import {
  child, deepEqual, index, inRange, nameIsDNSSubdomain, nonNegative, uniqueNames,
    validateAnnotations,
  validateIP, validateLabels, validateObjectMeta, validateObjectMetaUpdate,
} from './common.js';
import {
  isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue, isValidPortName,
  isValidPortNum,
} from './names.js';

export const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const MAX_INT32 = 2147483647;

function validatePorts(c: Container, hostNetwork: boolean, path: string): Cause[] {
  const out: Cause[] = [];
  const names = new Set<string>();
  (c.ports ?? []).forEach((p, i) => {
    const pp = index(path, i);
    if (p.name) {
      const msgs = isValidPortName(p.name);
      out.push(...invalidEach(child(pp, 'name'), p.name, msgs));
      if (msgs.length === 0 && names.has(p.name)) out.push(duplicate(child(pp, 'name'), p.name));
      names.add(p.name);
    }
    if (!p.containerPort) out.push(required(child(pp, 'containerPort'), ''));
    else out.push(...invalidEach(child(pp, 'containerPort'), p.containerPort,
      isValidPortNum(p.containerPort)));
    if (p.hostPort) {
      out.push(...invalidEach(child(pp, 'hostPort'), p.hostPort, isValidPortNum(p.hostPort)));
      if (hostNetwork && p.hostPort !== p.containerPort) {
        out.push(invalid(child(pp, 'hostPort'), p.hostPort,
          'must match `containerPort` when `hostNetwork` is true'));
      }
    }
    if (!p.protocol) out.push(required(child(pp, 'protocol'), ''));
    else if (!PROTOCOLS.includes(p.protocol)) out.push(notSupported(child(pp, 'protocol'),
      p.protocol, PROTOCOLS));
  });
  return out;
}

function validateEnv(c: Container, path: string): Cause[] {
  const out: Cause[] = [];
  (c.env ?? []).forEach((e, i) => {
    const p = child(index(path, i), 'name');
    if (!e.name) out.push(required(p, ''));
    else if (!/^[\x20-\x3c\x3e-\x7e]+$/.test(e.name)) {
      out.push(invalid(p, e.name, "a valid environment variable name must consist only of "
        + "printable ASCII characters other than '='"));
    }
  });
  return out;
}

function validateContainer(c: Container, hostNet: boolean, path: string, isPod: boolean): Cause[] {
  const out: Cause[] = [];
  if (!c.name) out.push(required(child(path, 'name'), ''));
  else out.push(...invalidEach(child(path, 'name'), c.name, isDNS1123Label(c.name)));
  if (!c.image) out.push(required(child(path, 'image'), ''));
  else if (isPod && c.image.trim() !== c.image) {
    out.push(invalid(child(path, 'image'), c.image,
      'must not have leading or trailing whitespace'));
  }
  out.push(...validatePorts(c, hostNet, child(path, 'ports')));
  out.push(...validateEnv(c, child(path, 'env')));
  if (!c.imagePullPolicy) out.push(required(child(path, 'imagePullPolicy'), ''));
  else if (!PULL_POLICIES.includes(c.imagePullPolicy)) {
    out.push(notSupported(child(path, 'imagePullPolicy'), c.imagePullPolicy, PULL_POLICIES));
  }
  const tmp = c.terminationMessagePolicy;
  if (!tmp) out.push(required(child(path, 'terminationMessagePolicy'), ''));
  else if (!TERMINATION_MESSAGE_POLICIES.includes(tmp)) {
    out.push(notSupported(child(path, 'terminationMessagePolicy'), tmp,
      TERMINATION_MESSAGE_POLICIES));
  }
  return out;
}

function validateContainers(list: Container[] | undefined, hostNet: boolean, path: string,
  isPod: boolean, init = false): Cause[] {
  const out: Cause[] = [];
  (list ?? []).forEach((c, i) => {
    out.push(...validateContainer(c, hostNet, index(path, i), isPod));
    out.push(...(init ? validateInitRestart(c, index(path, i)) : []));
    // upstream: restartPolicy is for init containers only (sidecars, KEP-753).
    const rp = (c as { restartPolicy?: string }).restartPolicy;
    if (!init && rp !== undefined) out.push(forbidden(child(index(path, i), 'restartPolicy'), 'may not be set for non-init containers'));
  });
  return out;
}

const SIDECAR_ONLY = ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const;

/** An init container's restartPolicy may only be Always (a sidecar, KEP-753, GA in v1.33);
 *  lifecycle hooks and probes are a sidecar's only, as upstream's validateInitContainers. */
function validateInitRestart(c: Container, path: string): Cause[] {
  const out: Cause[] = [];
  const rp = (c as { restartPolicy?: string }).restartPolicy;
  if (rp !== undefined && rp !== 'Always') out.push(notSupported(child(path, 'restartPolicy'), rp, ['Always']));
  if (rp === 'Always') return out;
  for (const f of SIDECAR_ONLY) {
    if (c[f] !== undefined && c[f] !== null) {
      out.push(forbidden(child(path, f), 'may not be set for init containers without restartPolicy=Always'));
    }
  }
  return out;
}

export function validateTolerations(tols: Toleration[] | undefined, path: string): Cause[] {
  const out: Cause[] = [];
  (tols ?? []).forEach((t, i) => {
    const p = index(path, i);
    if (t.key) out.push(...invalidEach(child(p, 'key'), t.key, isQualifiedName(t.key)));
    if (!t.key && t.operator !== 'Exists') {
      out.push(invalid(child(p, 'operator'), t.operator ?? '',
        'operator must be Exists when `key` is empty, which means '
          + '"match all values and all keys"'));
    }
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') {
      out.push(invalid(child(p, 'effect'), t.effect ?? '',
        "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (t.operator === 'Exists') {
      if (t.value) {
        out.push(invalid(child(p, 'operator'), t.value,
          "value must be empty when `operator` is 'Exists'"));
      }
    } else if (!t.operator || t.operator === 'Equal') {
      out.push(...invalidEach(child(p, 'value'), t.value, isValidLabelValue(t.value ?? '')));
    } else {
      out.push(notSupported(child(p, 'operator'), t.operator, ['Equal', 'Exists']));
    }
    if (t.effect && !TAINT_EFFECTS.includes(t.effect)) {
      out.push(notSupported(child(p, 'effect'), t.effect, TAINT_EFFECTS));
    }
  });
  return out;
}

function validatePolicies(s: PodSpec, path: string): Cause[] {
  const out: Cause[] = [];
  if (!s.restartPolicy) out.push(required(child(path, 'restartPolicy'), ''));
  else if (!RESTART_POLICIES.includes(s.restartPolicy)) {
    out.push(notSupported(child(path, 'restartPolicy'), s.restartPolicy, RESTART_POLICIES));
  }
  if (!s.dnsPolicy) out.push(required(child(path, 'dnsPolicy'), ''));
  else if (!DNS_POLICIES.includes(s.dnsPolicy)) {
    out.push(notSupported(child(path, 'dnsPolicy'), s.dnsPolicy, DNS_POLICIES));
  } else if (s.dnsPolicy === 'None' && !s.dnsConfig) {
    out.push(required(child(path, 'dnsConfig'),
      'must provide `dnsConfig` when `dnsPolicy` is None'));
  }
  (s.dnsConfig?.nameservers ?? []).forEach((ns, i) => {
    out.push(...validateIP(ns, index(child(child(path, 'dnsConfig'), 'nameservers'), i)));
  });
  if (s.activeDeadlineSeconds !== undefined && s.activeDeadlineSeconds <= 0) {
    out.push(...inRange(s.activeDeadlineSeconds, 1, MAX_INT32, child(path,
      'activeDeadlineSeconds')));
  }
  out.push(...nonNegative(s.terminationGracePeriodSeconds, child(path,
    'terminationGracePeriodSeconds')));
  return out;
}

/** Adds the causes of name `v` (when set) at `path.f`. A module function, not a closure: one
 *  per call would be created (and named, under tsx) on every pod write. */
function checkName(out: Cause[], path: string, v: string | undefined, f: string,
  fn: (x: string) => string[]): void {
  if (v) out.push(...invalidEach(child(path, f), v, fn(v)));
}

function validateNames(s: PodSpec, path: string): Cause[] {
  const out: Cause[] = [];
  checkName(out, path, s.nodeName, 'nodeName', isDNS1123Subdomain);
  checkName(out, path, s.serviceAccountName, 'serviceAccountName', isDNS1123Subdomain);
  checkName(out, path, s.schedulerName, 'schedulerName', isDNS1123Subdomain);
  checkName(out, path, s.hostname, 'hostname', isDNS1123Label);
  checkName(out, path, s.subdomain, 'subdomain', isDNS1123Label);
  checkName(out, path, s.priorityClassName, 'priorityClassName', isDNS1123Subdomain);
  out.push(...validateLabels(s.nodeSelector, child(path, 'nodeSelector')));
  (s.hostAliases ?? []).forEach((h, i) => {
    out.push(...validateIP(h.ip ?? '', child(index(child(path, 'hostAliases'), i), 'ip')));
  });
  return out;
}

/** Upstream ValidatePodSpec (subset). `isPod` adds the pod-only checks (image whitespace). */
export function validatePodSpec(s: PodSpec | undefined, path: string, isPod = true): Cause[] {
  if (!s) return [required(path, '')];
  const out: Cause[] = [];
  const vols = s.volumes ?? [];
  vols.forEach((v, i) => {
    const p = child(index(child(path, 'volumes'), i), 'name');
    if (!v.name) out.push(required(p, ''));
    else out.push(...invalidEach(p, v.name, isDNS1123Label(v.name)));
  });
  // Inline callbacks, not named consts: tsx names each named closure on every call.
  out.push(...uniqueNames(vols, (v) => v.name,
    (i) => child(index(child(path, 'volumes'), i), 'name')));
  const hostNet = s.hostNetwork === true;
  if (!s.containers || s.containers.length === 0) out.push(required(child(path, 'containers'), ''));
  out.push(...validateContainers(s.containers, hostNet, child(path, 'containers'), isPod));
  out.push(...validateContainers(s.initContainers, hostNet, child(path, 'initContainers'), isPod, true));
  const all = [...(s.containers ?? []), ...(s.initContainers ?? [])];
  const kinds = [...(s.containers ?? []).map(() => 'containers'),
    ...(s.initContainers ?? []).map(() => 'initContainers')];
  const nContainers = s.containers?.length ?? 0;
  out.push(...uniqueNames(all, (c) => c.name, (i) => child(index(child(path, kinds[i]!),
    kinds[i] === 'containers' ? i : i - nContainers), 'name')));
  out.push(...validatePolicies(s, path));
  out.push(...validateNames(s, path));
  out.push(...validateTolerations(s.tolerations, child(path, 'tolerations')));
  return out;
}

/** Upstream ValidatePodTemplateSpec: labels, annotations and spec (no name checks). */
export function validatePodTemplateSpec(t: PodTemplateSpec | undefined, path: string): Cause[] {
  if (!t) return [required(path, '')];
  return [
    ...validateLabels(t.metadata?.labels, child(child(path, 'metadata'), 'labels')),
    ...validateAnnotations(t.metadata?.annotations, child(child(path, 'metadata'), 'annotations')),
    ...validatePodSpec(t.spec, child(path, 'spec'), false),
  ];
}

function validatePodStatus(pod: Pod): Cause[] {
  const out: Cause[] = [];
  const st = pod.status ?? {};
  for (const f of ['podIPs', 'hostIPs'] as const) {
    (st[f] ?? []).forEach((p, i) => out.push(...validateIP(p.ip, `status.${f}[${i}].ip`)));
  }
  if (st.podIPs && st.podIPs.length > 0 && st.podIP && st.podIPs[0]!.ip !== st.podIP) {
    out.push(invalid('status.podIPs', st.podIPs.map((p) => p.ip),
      'first value must match `podIP`'));
  }
  return out;
}

export function validatePod(pod: Pod): Cause[] {
  return [
    ...validateObjectMeta(pod.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain }),
    ...validatePodSpec(pod.spec, 'spec', true),
    ...validatePodStatus(pod),
  ];
}

const UPDATABLE = ['`spec.containers[*].image`', '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`', '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)'];

function sameToleration(a: Toleration, b: Toleration): boolean {
  return deepEqual({ ...a, tolerationSeconds: undefined }, { ...b, tolerationSeconds: undefined });
}

/** The old spec with the fields a pod update may change taken from the new one. */
function mungedOldSpec(s: PodSpec, o: PodSpec): PodSpec {
  const images = (a: Container[] | undefined,
    b: Container[] | undefined): Container[] | undefined =>
    b?.map((c, i) => ({ ...c, image: a?.[i]?.image ?? c.image }));
  const gatesShrunk = (s.schedulingGates ?? []).every((g) =>
    (o.schedulingGates ?? []).some((x) => x.name === g.name));
  return {
    ...o,
    containers: images(s.containers, o.containers) ?? o.containers,
    initContainers: images(s.initContainers, o.initContainers),
    activeDeadlineSeconds: s.activeDeadlineSeconds,
    tolerations: s.tolerations,
    terminationGracePeriodSeconds: (o.terminationGracePeriodSeconds ?? 0) < 0
      && s.terminationGracePeriodSeconds === 1 ? 1 : o.terminationGracePeriodSeconds,
    schedulingGates: gatesShrunk ? s.schedulingGates : o.schedulingGates,
  };
}

/** Upstream ValidatePodUpdate: the spec is immutable apart from a few fields. */
export function validatePodUpdate(pod: Pod, old: Pod): Cause[] {
  const out = [...validateObjectMetaUpdate(pod.metadata, old.metadata), ...validatePod(pod)];
  const s = pod.spec;
  const o = old.spec;
  if (!s || !o) return out;
  const ads = 'spec.activeDeadlineSeconds';
  if (o.activeDeadlineSeconds !== undefined) {
    if (s.activeDeadlineSeconds === undefined) {
      out.push(invalid(ads, null, 'must not update from a positive integer to nil value'));
    } else if (s.activeDeadlineSeconds > o.activeDeadlineSeconds) {
      out.push(invalid(ads, s.activeDeadlineSeconds,
        'must be less than or equal to previous value'));
    }
  }
  for (const t of o.tolerations ?? []) {
    if (!(s.tolerations ?? []).some((n) => sameToleration(n, t))) {
      out.push(forbidden('spec.tolerations',
        'existing toleration can not be modified except its tolerationSeconds'));
      break;
    }
  }
  if (!deepEqual(s, mungedOldSpec(s, o))) {
    out.push(forbidden('spec',
      `pod updates may not change fields other than ${UPDATABLE.join(',')}`));
  }
  return out;
}

/** Status-subresource update: metadata identity and status fields only. */
export function validatePodStatusUpdate(pod: Pod, old: Pod): Cause[] {
  return [...validateObjectMetaUpdate(pod.metadata, old.metadata), ...validatePodStatus(pod)];
}
