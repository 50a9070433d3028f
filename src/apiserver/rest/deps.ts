// What the service layer is built from. Every stage is passed in (no singletons), so tests and
// the two transports (HTTP, in-process) share one pipeline.

import type { ComponentStatusSource } from './component-status.js';
import type { MetricsApiSource } from '../../metrics/api.js';
import type { Cause } from '../../errors.js';
import type { KubeObject } from '../../client/types.js';
import type { StoreBackend } from '../../store/types.js';
import type { ServiceAccountTokenIssuer } from '../authn/service-account.js';
import type { AdmissionPlugin, Authorizer, UserInfo } from '../pipeline-types.js';
import type { ResourceCatalog, ServedResource } from '../resource-types.js';

/** Object-level rules from the api package, adapted to the served resource. */
export interface ObjectRules {
  /** Fills defaults in place (idempotent). */
  applyDefaults(r: ServedResource, obj: KubeObject, onCreate: boolean): void;
  /** Every problem found; empty when valid. `old` is set on update. */
  validate(r: ServedResource, obj: KubeObject, old?: KubeObject, subresource?: string): Cause[];
  /** Throws KDP_BAD_REQUEST on a malformed selector. */
  compileLabelSelector(selector: string): (labels: Record<string, string>) => boolean;
  /** Throws KDP_BAD_REQUEST (`field label not supported: f`) on an unknown field. */
  compileFieldSelector(r: ServedResource, selector: string): (obj: KubeObject) => boolean;
}

export interface LogOptions {
  readonly container?: string;
  readonly follow?: boolean;
  readonly tailLines?: number;
  readonly previous?: boolean;
  readonly sinceSeconds?: number;
  /** RFC3339 (kubectl --since-time). */
  readonly sinceTime?: string;
  readonly timestamps?: boolean;
  readonly limitBytes?: number;
  /** Aborted when the client has gone (a follow stops reading the kubelet). */
  readonly signal?: AbortSignal;
}

/** Serves pods/log: the pod's node's kubelet's answer (proxy/kubelet-logs.ts). */
export interface LogProvider {
  /** Text, or a stream of chunks. Throws KdpError (the kubelet's refusal, an unreachable node). */
  logs(pod: KubeObject, container: string, opts: LogOptions):
    Promise<string | AsyncIterable<string | Uint8Array>>;
}

export interface ServiceDeps {
  readonly store: StoreBackend;
  readonly catalog: ResourceCatalog;
  readonly rules: ObjectRules;
  readonly authorizer: Authorizer;
  readonly admission: readonly AdmissionPlugin[];
  readonly now: () => Date;
  readonly newUid: () => string;
  /** Milliseconds between watch bookmarks (when a watcher asks for them). */
  readonly bookmarkIntervalMs: number;
  logProvider?: LogProvider;
  /** Signs serviceaccounts/token answers; without it that subresource answers 404. */
  readonly serviceAccountTokens?: ServiceAccountTokenIssuer;
  /** What `componentstatuses` answers; default: probes of the components' secure ports. */
  readonly componentStatuses?: ComponentStatusSource;
  /** metrics.k8s.io (`kubectl top`) and its APIService; absent: the group is not served. */
  readonly metricsApi?: MetricsApiSource;
}

export interface RequestContext {
  readonly user: UserInfo;
}
