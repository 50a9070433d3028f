// kubeconfig files (clientcmd v1 `Config`): rendering one for a kdp cluster and loading the
// current context of one into HTTP client options.

import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { kdpError } from '../errors.js';
import type { HttpClientOptions } from './http-client.js';

export interface RenderKubeconfigOptions {
  readonly server: string;
  /** Omitted for plain-http servers. */
  readonly caPem?: string;
  readonly token?: string;
  readonly certPem?: string;
  readonly keyPem?: string;
  /** Cluster, context and (with `-admin`) user name; default `kdp`. */
  readonly clusterName?: string;
  readonly namespace?: string;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** A kubeconfig with one cluster, user and context (current), as kubeadm writes admin.conf. */
export function renderKubeconfig(o: RenderKubeconfigOptions): string {
  const name = o.clusterName ?? 'kdp';
  const user = `${name}-admin`;
  if ((o.certPem === undefined) !== (o.keyPem === undefined)) {
    throw kdpError('KDP_CONFIG', 'kubeconfig: a client certificate needs its key (and back)');
  }
  const cluster: Record<string, string> = { server: o.server };
  if (o.caPem) cluster['certificate-authority-data'] = b64(o.caPem);
  const auth: Record<string, string> = {};
  if (o.certPem && o.keyPem) {
    auth['client-certificate-data'] = b64(o.certPem);
    auth['client-key-data'] = b64(o.keyPem);
  }
  if (o.token) auth.token = o.token;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name: user, user: auth }],
    contexts: [{ name, context: { cluster: name, user, namespace: o.namespace ?? 'default' } }],
    'current-context': name,
    preferences: {},
  });
}

export interface LoadedKubeconfig extends HttpClientOptions {
  readonly namespace: string;
  readonly context: string;
}

type Entry = Record<string, unknown> & { name?: string };

/** The `field` of the entry called `name` in a kubeconfig list (clusters, users, contexts). */
function pick<T>(list: unknown, name: string, field: string, what: string, path: string): T {
  const found = (Array.isArray(list) ? list as Entry[] : []).find((e) => e?.name === name);
  const v = found?.[field] as T | undefined;
  if (!v) {
    throw kdpError('KDP_CONFIG', `kubeconfig ${path}: no ${what} named ${JSON.stringify(name)}`);
  }
  return v;
}

function dataOrFile(o: Record<string, unknown>, key: string, base: string): string | undefined {
  const data = o[`${key}-data`];
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64').toString('utf8');
  const file = o[key];
  if (typeof file !== 'string' || file === '') return undefined;
  const p = isAbsolute(file) ? file : resolve(base, file);
  try {
    return readFileSync(p, 'utf8');
  } catch (e) {
    throw kdpError('KDP_CONFIG', `kubeconfig: cannot read ${key} ${p}: ${(e as Error).message}`,
      {}, e);
  }
}

/** Reads the current (or given) context of a kubeconfig into client options. */
export function loadKubeconfig(path: string, opts: { context?: string } = {}): LoadedKubeconfig {
  let doc: Record<string, unknown>;
  try {
    doc = (parse(readFileSync(path, 'utf8')) ?? {}) as Record<string, unknown>;
  } catch (e) {
    throw kdpError('KDP_CONFIG', `cannot read kubeconfig ${path}: ${(e as Error).message}`, {}, e);
  }
  const base = dirname(path);
  const context = opts.context ?? (doc['current-context'] as string | undefined) ?? '';
  if (!context) throw kdpError('KDP_CONFIG', `kubeconfig ${path}: no current-context`);
  const ctx = pick<Record<string, string>>(doc.contexts, context, 'context', 'context', path);
  const cluster = pick<Record<string, unknown>>(doc.clusters, ctx.cluster ?? '', 'cluster',
    'cluster', path);
  const user = ctx.user ? pick<Record<string, unknown>>(doc.users, ctx.user, 'user', 'user', path)
    : {};
  const server = cluster.server;
  if (typeof server !== 'string' || !server) {
    throw kdpError('KDP_CONFIG', `kubeconfig ${path}: cluster ${ctx.cluster} has no server`);
  }
  const tokenFile = typeof user.tokenFile === 'string' ? user.tokenFile : undefined;
  const token = typeof user.token === 'string' && user.token ? user.token
    : tokenFile ? readFileSync(resolve(base, tokenFile), 'utf8').trim() : undefined;
  const pem = (o: Record<string, unknown>, k: string) => dataOrFile(o, k, base);
  const out: LoadedKubeconfig = {
    server, context, namespace: ctx.namespace || 'default',
    caPem: pem(cluster, 'certificate-authority'),
    certPem: pem(user, 'client-certificate'),
    keyPem: pem(user, 'client-key'),
    token,
    insecureSkipVerify: cluster['insecure-skip-tls-verify'] === true,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as
    unknown as LoadedKubeconfig;
}
