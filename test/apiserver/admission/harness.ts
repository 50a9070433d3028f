// A tiny stand-in for the API server's write path around admission plugins: defaults → admit →
// validate → store → committed (or aborted), over an in-memory map that is also the plugins'
// AdmissionSource.
import { defaultService } from '../../../src/api/defaults.js';
import type { Service } from '../../../src/api/types.js';
import type { AdmissionSource } from '../../../src/apiserver/admission/index.js';
import type {
  AdmissionOperation, AdmissionPlugin, AdmissionRequest,
} from '../../../src/apiserver/pipeline-types.js';
import type { KubeObject } from '../../../src/client/types.js';

const user = { name: 'tester', groups: ['system:masters'] };
const RESOURCE_OF: Record<string, string> = { Service: 'services', Pod: 'pods',
  Namespace: 'namespaces', ConfigMap: 'configmaps' };

export class Harness implements AdmissionSource {
  readonly objects = new Map<string, KubeObject>();
  plugins: AdmissionPlugin[] = [];

  private key(resource: string, ns: string | undefined, name: string) {
    return `${resource}/${ns ?? ''}/${name}`;
  }

  async get(resource: string, ns: string | undefined, name: string) {
    return this.objects.get(this.key(resource, ns, name)) ?? null;
  }

  async list(resource: string, ns?: string) {
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(`${resource}/${ns ?? ''}`))
      .map(([, v]) => v);
  }

  put(obj: KubeObject): void {
    const r = RESOURCE_OF[obj.kind ?? '']!;
    this.objects.set(this.key(r, obj.metadata.namespace, obj.metadata.name!), obj);
  }

  private request(op: AdmissionOperation, obj: KubeObject | undefined, old: KubeObject | undefined,
    dryRun: boolean): AdmissionRequest {
    const o = (obj ?? old)!;
    return { operation: op, group: '', version: 'v1', resource: RESOURCE_OF[o.kind ?? '']!,
      namespace: o.metadata.namespace, name: o.metadata.name, object: obj, oldObject: old, user,
      dryRun };
  }

  /** Runs one write; `failStore` simulates a storage error after admission. */
  async write(op: AdmissionOperation, obj: KubeObject | undefined, opts:
    { dryRun?: boolean; failStore?: boolean; keep?: boolean } = {}): Promise<KubeObject> {
    const r = RESOURCE_OF[(obj ?? {}).kind ?? 'Service']!;
    const src = obj ? structuredClone(obj) : undefined;
    if (src?.kind === 'Service') defaultService(src as Service);
    const current = src ? await this.get(r, src.metadata.namespace, src.metadata.name!) : null;
    const req = this.request(op, src, op === 'CREATE' ? undefined : current ?? undefined,
      !!opts.dryRun);
    try {
      for (const p of this.plugins) await p.admit?.(req);
      for (const p of this.plugins) await p.validate?.(req);
    } catch (e) {
      for (const p of this.plugins) await p.aborted?.(req);
      throw e;
    }
    if (opts.dryRun || opts.failStore) {
      for (const p of this.plugins) await p.aborted?.(req);
      return src!;
    }
    this.put(src!);
    for (const p of this.plugins) await p.committed?.(req);
    return src!;
  }

  /** Deletes; `keep` leaves the object stored (pending finalizers). */
  async remove(kind: string, ns: string | undefined, name: string, keep = false): Promise<void> {
    const r = RESOURCE_OF[kind]!;
    const old = (await this.get(r, ns, name))!;
    const req: AdmissionRequest = { operation: 'DELETE', group: '', version: 'v1', resource: r,
      namespace: ns, name, oldObject: old, user, dryRun: false };
    for (const p of this.plugins) await p.admit?.(req);
    for (const p of this.plugins) await p.validate?.(req);
    if (!keep) this.objects.delete(this.key(r, ns, name));
    for (const p of this.plugins) await p.committed?.(req);
  }
}

export function service(name: string, spec: Service['spec'] = {}): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' },
    spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec } };
}

/** A deterministic Random: always returns the same fraction. */
export const fixedRandom = (x = 0) => () => x;
