// Namespace, Node, ConfigMap, Secret, ServiceAccount, Event and RBAC validation as upstream
// (v1.33), the checks that can fail for hand-written input.

import type {
  ClusterRole, ClusterRoleBinding, ConfigMap, Event, Namespace, Node, PolicyRule, Role,
  RoleBinding, Secret, ServiceAccount, Subject,
} from '../types.js';
import { parseCIDR } from '../net.js';
import {
  type Cause, duplicate, forbidden, invalid, notSupported, required, tooLong, invalidEach,
} from './field-errors.js';
import {
  child, index, nameIsDNSLabel, nameIsDNSSubdomain, nameIsPathSegment, validateCIDR,
  validateFinalizerName, validateImmutable, validateObjectMeta, validateObjectMetaUpdate,
} from './common.js';
import {
  isDNS1123Subdomain, isQualifiedName, isValidLabelValue, regexError,
} from './names.js';

export function validateNamespace(ns: Namespace): Cause[] {
  const out = validateObjectMeta(ns.metadata, { namespaced: false, nameFn: nameIsDNSLabel });
  for (const f of ns.spec?.finalizers ?? []) {
    out.push(...validateFinalizerName(f, 'spec.finalizers'));
  }
  return out;
}

function validateTaints(n: Node): Cause[] {
  const out: Cause[] = [];
  const seen = new Set<string>();
  (n.spec?.taints ?? []).forEach((t, i) => {
    const p = index('spec.taints', i);
    out.push(...invalidEach(child(p, 'key'), t.key ?? '', isQualifiedName(t.key ?? '')));
    if (t.value) out.push(...invalidEach(child(p, 'value'), t.value, isValidLabelValue(t.value)));
    const effects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
    if (!t.effect) out.push(required(child(p, 'effect'), ''));
    else if (!effects.includes(t.effect)) out.push(notSupported(child(p, 'effect'), t.effect,
      effects));
    const k = `${t.key}:${t.effect}`;
    if (seen.has(k)) out.push(duplicate(p, t));
    seen.add(k);
  });
  return out;
}

export function validateNode(n: Node): Cause[] {
  const out = validateObjectMeta(n.metadata, { namespaced: false, nameFn: nameIsDNSSubdomain });
  const s = n.spec ?? {};
  if (s.podCIDR) out.push(...validateCIDR(s.podCIDR, 'spec.podCIDR'));
  const cidrs = s.podCIDRs ?? [];
  cidrs.forEach((c, i) => out.push(...validateCIDR(c, index('spec.podCIDRs', i))));
  if (cidrs.length > 1) {
    const fams = cidrs.map((c) => parseCIDR(c)?.family);
    if (cidrs.length > 2 || fams[0] === fams[1]) {
      out.push(invalid('spec.podCIDRs', cidrs,
        'may specify no more than one CIDR for each IP family'));
    }
  }
  out.push(...validateTaints(n));
  return out;
}

export function validateNodeUpdate(n: Node, old: Node): Cause[] {
  const out = [...validateObjectMetaUpdate(n.metadata, old.metadata), ...validateNode(n)];
  const a = n.spec?.podCIDRs ?? [];
  const b = old.spec?.podCIDRs ?? [];
  if (b.length > 0 && (a.length !== b.length || a.some((c, i) => c !== b[i]))) {
    out.push(forbidden('spec.podCIDRs',
      'node updates may not change podCIDR except from "" to valid'));
  }
  return out;
}

const CONFIG_KEY_MSG = 'a valid config key must consist of alphanumeric characters, '
  + "'-', '_' or '.'";

/** Upstream IsConfigMapKey. */
function isConfigMapKey(k: string): string[] {
  const errs: string[] = [];
  if (k.length > 253) errs.push('must be no more than 253 characters');
  if (!/^[-._a-zA-Z0-9]+$/.test(k)) {
    errs.push(regexError(CONFIG_KEY_MSG, '[-._a-zA-Z0-9]+', 'key.name', 'KEY_NAME', 'key-name'));
  }
  if (k === '.') errs.push("must not be '.'");
  else if (k === '..') errs.push("must not be '..'");
  else if (k.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

const DATA_LIMIT = 1024 * 1024;

function validateDataKeys(data: Record<string, string> | undefined, path: string): Cause[] {
  const out: Cause[] = [];
  for (const k of Object.keys(data ?? {})) {
    out.push(...invalidEach(index(path, k), k, isConfigMapKey(k)));
  }
  return out;
}

export function validateConfigMap(cm: ConfigMap): Cause[] {
  const out = validateObjectMeta(cm.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain });
  out.push(...validateDataKeys(cm.data, 'data'), ...validateDataKeys(cm.binaryData, 'binaryData'));
  let size = 0;
  for (const [k, v] of Object.entries(cm.data ?? {})) {
    size += Buffer.byteLength(String(v));
    if (cm.binaryData && k in cm.binaryData) out.push(invalid('data', k,
      'duplicate of key present in binaryData'));
  }
  for (const v of Object.values(cm.binaryData ?? {})) size += base64Size(String(v));
  if (size > DATA_LIMIT) out.push(tooLong('', DATA_LIMIT));
  return out;
}

export function validateConfigMapUpdate(cm: ConfigMap, old: ConfigMap): Cause[] {
  const out = [...validateObjectMetaUpdate(cm.metadata, old.metadata), ...validateConfigMap(cm)];
  if (old.immutable) {
    if (!cm.immutable) out.push(forbidden('immutable',
      'field is immutable when `immutable` is set'));
    for (const f of ['data', 'binaryData'] as const) {
      if (validateImmutable(cm[f], old[f], f).length > 0) {
        out.push(forbidden(f, 'field is immutable when `immutable` is set'));
      }
    }
  }
  return out;
}

/** Bytes a (decodable) base64 value holds: what upstream's size limits count. */
function base64Size(v: string): number {
  const t = v.replace(/[\r\n]/g, '');
  const pad = t.endsWith('==') ? 2 : t.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((t.length * 3) / 4) - pad);
}

export function validateSecret(s: Secret): Cause[] {
  const out = validateObjectMeta(s.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain });
  out.push(...validateDataKeys(s.data, 'data'));
  let size = 0;
  for (const v of Object.values(s.data ?? {})) size += base64Size(String(v));
  if (size > DATA_LIMIT) out.push(tooLong('data', DATA_LIMIT));
  return out;
}

export function validateSecretUpdate(s: Secret, old: Secret): Cause[] {
  const out = [...validateObjectMetaUpdate(s.metadata, old.metadata), ...validateSecret(s)];
  out.push(...validateImmutable(s.type ?? '', old.type ?? '', 'type'));
  if (old.immutable) {
    if (!s.immutable) out.push(forbidden('immutable',
      'field is immutable when `immutable` is set'));
    if (validateImmutable(s.data, old.data, 'data').length > 0) {
      out.push(forbidden('data', 'field is immutable when `immutable` is set'));
    }
  }
  return out;
}

export function validateServiceAccount(sa: ServiceAccount): Cause[] {
  return validateObjectMeta(sa.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain });
}

export function validateEvent(ev: Event): Cause[] {
  const out = validateObjectMeta(ev.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain });
  const ns = ev.metadata.namespace ?? '';
  const ins = ev.involvedObject?.namespace ?? '';
  const ok = ins === '' ? ns === '' || ns === 'default' : ns === ins;
  if (!ok) out.push(invalid('involvedObject.namespace', ins, 'does not match event.namespace'));
  return out;
}

function validateRules(rules: PolicyRule[] | undefined, namespaced: boolean): Cause[] {
  const out: Cause[] = [];
  (rules ?? []).forEach((r, i) => {
    const p = index('rules', i);
    if (!r.verbs?.length) out.push(required(child(p, 'verbs'),
      'verbs must contain at least one value'));
    const urls = r.nonResourceURLs ?? [];
    if (urls.length > 0) {
      if (namespaced) out.push(invalid(child(p, 'nonResourceURLs'), urls,
        'namespaced rules cannot apply to non-resource URLs'));
      if (r.apiGroups?.length || r.resources?.length || r.resourceNames?.length) {
        out.push(invalid(child(p, 'nonResourceURLs'), urls,
          'rules cannot apply to both regular resources and non-resource URLs'));
      }
      return;
    }
    if (!r.apiGroups?.length) out.push(required(child(p, 'apiGroups'),
      'resource rules must supply at least one api group'));
    if (!r.resources?.length) out.push(required(child(p, 'resources'),
      'resource rules must supply at least one resource'));
  });
  return out;
}

export function validateRole(r: Role): Cause[] {
  return [...validateObjectMeta(r.metadata, { namespaced: true, nameFn: nameIsPathSegment }),
    ...validateRules(r.rules, true)];
}

export function validateClusterRole(r: ClusterRole): Cause[] {
  return [...validateObjectMeta(r.metadata, { namespaced: false, nameFn: nameIsPathSegment }),
    ...validateRules(r.rules, false)];
}

const RBAC_GROUP = 'rbac.authorization.k8s.io';

function validateSubject(s: Subject, namespaced: boolean, path: string): Cause[] {
  const out: Cause[] = [];
  if (!s.name) out.push(required(child(path, 'name'), ''));
  if (s.kind === 'ServiceAccount') {
    if (s.name) out.push(...invalidEach(child(path, 'name'), s.name, isDNS1123Subdomain(s.name)));
    if (s.apiGroup) out.push(notSupported(child(path, 'apiGroup'), s.apiGroup, ['']));
    if (!namespaced && !s.namespace) out.push(required(child(path, 'namespace'), ''));
  } else if (s.kind === 'User' || s.kind === 'Group') {
    if (s.apiGroup !== RBAC_GROUP) out.push(notSupported(child(path, 'apiGroup'), s.apiGroup ?? '',
      [RBAC_GROUP]));
  } else {
    out.push(notSupported(child(path, 'kind'), s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
  }
  return out;
}

function validateBinding(b: RoleBinding | ClusterRoleBinding, namespaced: boolean): Cause[] {
  const out = validateObjectMeta(b.metadata, { namespaced, nameFn: nameIsPathSegment });
  const ref = b.roleRef ?? ({} as RoleBinding['roleRef']);
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (ref.apiGroup !== RBAC_GROUP) out.push(notSupported('roleRef.apiGroup', ref.apiGroup ?? '',
    [RBAC_GROUP]));
  if (!kinds.includes(ref.kind)) out.push(notSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) out.push(required('roleRef.name', ''));
  else out.push(...invalidEach('roleRef.name', ref.name, nameIsPathSegment(ref.name, false)));
  (b.subjects ?? []).forEach((s, i) => {
    out.push(...validateSubject(s, namespaced, index('subjects', i)));
  });
  return out;
}

export function validateRoleBinding(b: RoleBinding): Cause[] {
  return validateBinding(b, true);
}

export function validateClusterRoleBinding(b: ClusterRoleBinding): Cause[] {
  return validateBinding(b, false);
}

export function validateBindingUpdate(b: RoleBinding | ClusterRoleBinding,
  old: RoleBinding | ClusterRoleBinding, namespaced: boolean): Cause[] {
  const out = [...validateObjectMetaUpdate(b.metadata, old.metadata),
    ...validateBinding(b, namespaced)];
  if (validateImmutable(b.roleRef, old.roleRef, 'roleRef').length > 0) {
    out.push(invalid('roleRef', b.roleRef, 'cannot change roleRef'));
  }
  return out;
}
