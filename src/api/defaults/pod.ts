// Pod and PodSpec defaulting as upstream's SetDefaults_Pod / _PodSpec / _Container (v1.33).
// Not here (admission, not defaulting): serviceAccountName "default", priority, default
// tolerations (DefaultTolerationSeconds).

import type { Container, PodSpec, PodTemplateSpec, Pod, Probe, Volume } from '../types.js';

/** Tag of an image reference the way parsers.ParseImageName sees it ('' when only a digest). */
export function imageTag(image: string): string {
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const colon = name.lastIndexOf(':');
  const tag = colon > name.lastIndexOf('/') ? name.slice(colon + 1) : '';
  return tag === '' && at < 0 ? 'latest' : tag;
}

function defaultProbe(p: Probe | undefined): void {
  if (!p) return;
  p.timeoutSeconds ??= 1;
  p.periodSeconds ??= 10;
  p.successThreshold ??= 1;
  p.failureThreshold ??= 3;
  if (p.httpGet) {
    p.httpGet.path ??= '/';
    p.httpGet.scheme ??= 'HTTP';
  }
}

/** Upstream SetDefaults_Container (+ port protocol, probes and env field refs). */
export function defaultContainer(c: Container): void {
  if (!c.imagePullPolicy) {
    c.imagePullPolicy = imageTag(c.image ?? '') === 'latest' ? 'Always' : 'IfNotPresent';
  }
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  for (const p of c.ports ?? []) p.protocol ??= 'TCP';
  for (const e of c.env ?? []) {
    if (e.valueFrom?.fieldRef) e.valueFrom.fieldRef.apiVersion ??= 'v1';
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
}

const VOLUME_META = new Set(['name']);

function defaultVolume(v: Volume): void {
  const sources = Object.keys(v).filter((k) => !VOLUME_META.has(k));
  if (sources.length === 0) v.emptyDir = {};
  for (const k of ['configMap', 'secret', 'downwardAPI', 'projected'] as const) {
    const src = v[k] as { defaultMode?: number } | undefined;
    if (src && typeof src === 'object') src.defaultMode ??= 420;
  }
}

export function defaultPodSpec(s: PodSpec): void {
  s.dnsPolicy ??= 'ClusterFirst';
  s.restartPolicy ??= 'Always';
  if (s.serviceAccount && !s.serviceAccountName) s.serviceAccountName = s.serviceAccount;
  s.securityContext ??= {};
  s.terminationGracePeriodSeconds ??= 30;
  s.schedulerName ??= 'default-scheduler';
  for (const c of s.initContainers ?? []) defaultContainer(c);
  for (const c of s.containers ?? []) defaultContainer(c);
  for (const c of s.ephemeralContainers ?? []) defaultContainer(c);
  for (const v of s.volumes ?? []) defaultVolume(v);
}

/**
 * Upstream SetDefaults_Pod: on Pods only (not templates) requests default to limits,
 * enableServiceLinks to true, and under hostNetwork hostPort to containerPort.
 */
export function defaultPod(p: Pod): void {
  const s = p.spec;
  if (!s) return;
  defaultPodSpec(s);
  s.enableServiceLinks ??= true;
  for (const c of [...(s.containers ?? []), ...(s.initContainers ?? [])]) {
    const r = c.resources;
    if (r?.limits) {
      r.requests ??= {};
      for (const [k, v] of Object.entries(r.limits)) r.requests[k] ??= v;
    }
    if (s.hostNetwork !== true) continue;
    for (const port of c.ports ?? []) if (!port.hostPort) port.hostPort = port.containerPort;
  }
}

export function defaultPodTemplate(t: PodTemplateSpec | undefined): void {
  if (t?.spec) defaultPodSpec(t.spec);
}
