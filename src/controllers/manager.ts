// The controller manager: builds the enabled controllers over one shared informer factory and
// one event recorder per component, starts the informers, then the controllers.

import { buildInformerFactory, type InformerFactory } from '../client/informer.js';
import type { Client } from '../client/types.js';
import { buildEventRecorder, type EventRecorder } from '../client/events.js';
import { buildDaemonSetController } from './daemonset/controller.js';
import { buildDeploymentController } from './deployment/controller.js';
import { buildEndpointSliceController } from './endpointslice/controller.js';
import { buildEndpointsController } from './endpointslice/endpoints.js';
import { buildGarbageCollector } from './gc/controller.js';
import { buildJobController } from './job/controller.js';
import { buildNamespaceController } from './namespace/controller.js';
import { buildNodeIpamController } from './nodeipam/controller.js';
import { buildNodeLifecycleController } from './nodelifecycle/controller.js';
import { buildTaintEvictionController } from './nodelifecycle/taint-eviction.js';
import {
  resolveControllerOptions, type ControllerContext, type ControllerOptions,
} from './options.js';
import { buildReplicaSetController } from './replicaset/controller.js';
import { buildStatefulSetController } from './statefulset/controller.js';
import { buildCronJobController } from './cronjob/controller.js';
import { buildServiceAccountController } from './serviceaccount/controller.js';
import { buildRootCaPublisher } from './rootcacertpublisher/controller.js';
import { buildDisruptionController } from './disruption/controller.js';
import { buildServiceLbController } from './service-lb/controller.js';
import { buildRouteController } from './route/controller.js';
import { buildCloudNodeLifecycleController } from './cloud-nodelifecycle/controller.js';
import { buildTokenCleaner } from './bootstrap/tokencleaner.js';
import { buildBootstrapSigner } from './bootstrap/bootstrapsigner.js';
import { buildCsrApprover } from './certificates/approver.js';
import { buildCsrSigner } from './certificates/signer.js';
import type { Controller } from './util.js';

export interface ControllerManager {
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly informers: InformerFactory;
  readonly controllers: readonly Controller[];
  /** Waits for pending event writes (tests). */
  flushEvents(): Promise<void>;
}

const BUILDERS: Record<string, (ctx: ControllerContext) => Controller> = {
  replicaset: buildReplicaSetController,
  deployment: buildDeploymentController,
  daemonset: buildDaemonSetController,
  endpointslice: buildEndpointSliceController,
  endpoints: buildEndpointsController,
  nodeipam: buildNodeIpamController,
  nodelifecycle: buildNodeLifecycleController,
  'taint-eviction': buildTaintEvictionController,
  job: buildJobController,
  statefulset: buildStatefulSetController,
  cronjob: buildCronJobController,
  namespace: buildNamespaceController,
  gc: buildGarbageCollector,
  serviceaccount: buildServiceAccountController,
  'root-ca-certificate-publisher': buildRootCaPublisher,
  disruption: buildDisruptionController,
  'service-lb': buildServiceLbController,
  route: (ctx) => buildRouteController(ctx),
  'cloud-node-lifecycle': (ctx) => buildCloudNodeLifecycleController(ctx),
  tokencleaner: buildTokenCleaner,
  bootstrapsigner: buildBootstrapSigner,
  csrapproving: buildCsrApprover,
  csrsigning: buildCsrSigner,
};

export function buildControllerManager(deps: {
  client: Client;
  options?: ControllerOptions;
  /** Share the process's informers (e.g. with the scheduler); default: own. */
  informers?: InformerFactory;
}): ControllerManager {
  const options = resolveControllerOptions(deps.options);
  const informers = deps.informers ?? buildInformerFactory(deps.client);
  const recorders = new Map<string, EventRecorder>();
  const ctx: ControllerContext = {
    client: deps.client, informers, options,
    recorder(component) {
      let r = recorders.get(component);
      if (!r) {
        r = buildEventRecorder(deps.client,
          { component, enabled: options.events, now: options.now });
        recorders.set(component, r);
      }
      return r;
    },
  };
  const controllers = Object.entries(BUILDERS)
    .filter(([name]) => options.controllers.has(name))
    .map(([, build]) => build(ctx));
  return {
    informers,
    controllers,
    async start() {
      informers.start();
      await informers.waitForSync();
      for (const c of controllers) c.start();
    },
    async stop() {
      for (const c of controllers) c.stop();
      if (!deps.informers) informers.stop();
    },
    async flushEvents() {
      await Promise.all([...recorders.values()].map((r) => r.flush()));
    },
  };
}
