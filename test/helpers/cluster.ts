// A whole kdp control plane in one test process: a memory store, the real API server (with the
// DefaultTolerationSeconds admission plugin) and the in-process client. `startTestCluster` then adds the controller manager, the
// scheduler and virtual node agents as asked. Use `waitFor` to await eventual state (it polls;
// it never asserts on time).

import { buildApiServer, ADMIN_USER } from '../../src/apiserver/app.js';
import { buildDefaultTolerationSecondsPlugin } from '../../src/apiserver/admission/index.js';
import type { ApiService } from '../../src/apiserver/service.js';
import type { Client, KubeObject, ResourceRef } from '../../src/client/types.js';
import { buildControllerManager, type ControllerManager } from '../../src/controllers/manager.js';
import type { ControllerOptions } from '../../src/controllers/options.js';
import {
  buildNodeAgent, type NodeAgent, type NodeAgentOptions,
} from '../../src/kubelet/node-agent.js';
import { runtimeContainerLogs } from '../../src/kubelet/server/container-logs.js';
import type { Runtime } from '../../src/kubelet/runtime.js';
import type { LogProvider } from '../../src/apiserver/rest/deps.js';
import {
  buildVirtualRuntime, type VirtualRuntimeOptions,
} from '../../src/kubelet/runtime-virtual.js';
import {
  buildScheduler, type Scheduler, type SchedulerOptions,
} from '../../src/scheduler/scheduler.js';
import { buildMemoryStore } from '../../src/store/index.js';
import type { StoreBackend } from '../../src/store/types.js';
import { buildInProcessClient } from '../../src/client/in-process.js';

export interface ClusterOptions {
  readonly timeScale?: number;
  readonly nodes?: ReadonlyArray<string | { name: string; options?: NodeAgentOptions }>;
  readonly controllers?: ControllerOptions | false;
  readonly scheduler?: SchedulerOptions | false;
  readonly runtime?: VirtualRuntimeOptions;
}

export interface TestCluster {
  readonly client: Client;
  readonly service: ApiService;
  readonly store: StoreBackend;
  readonly manager?: ControllerManager;
  readonly scheduler?: Scheduler;
  readonly agents: Map<string, NodeAgent>;
  addNode(name: string, options?: NodeAgentOptions): Promise<NodeAgent>;
  close(): Promise<void>;
}

/** The API service plus an admin client over it. */
export async function startApi(): Promise<{ client: Client; service: ApiService;
  store: StoreBackend; runtimes: Map<string, Runtime>; close(): Promise<void> }> {
  const store = buildMemoryStore();
  // A test double of the kubelet's /containerLogs (the same reading, without HTTPS): these
  // in-process nodes serve no kubelet API. Real clusters fetch from the kubelet (kubelet-logs.ts).
  const runtimes = new Map<string, Runtime>();
  const logProvider: LogProvider = {
    async logs(pod, container, opts) {
      const rt = runtimes.get((pod.spec as { nodeName?: string }).nodeName ?? '');
      if (!rt) throw new Error(`node of pod ${pod.metadata.name} is not running here`);
      return runtimeContainerLogs(rt)(pod as never, container, opts, opts.signal ?? new AbortController().signal);
    },
  };
  const api = buildApiServer({ store, logProvider,
    admission: [buildDefaultTolerationSecondsPlugin()] });
  const client = buildInProcessClient(api.service, ADMIN_USER);
  return {
    client, service: api.service, store, runtimes,
    async close() { await api.close(); await store.close(); },
  };
}

export async function startTestCluster(o: ClusterOptions = {}): Promise<TestCluster> {
  const api = await startApi();
  const timeScale = o.timeScale ?? 1;
  const agents = new Map<string, NodeAgent>();
  let manager: ControllerManager | undefined;
  let scheduler: Scheduler | undefined;
  if (o.controllers !== false) {
    manager = buildControllerManager({
      client: api.client, options: { timeScale, ...(o.controllers ?? {}) },
    });
    await manager.start();
  }
  if (o.scheduler !== false) {
    scheduler = buildScheduler({ client: api.client,
      options: { timeScale, seed: 1, ...(o.scheduler ?? {}) } });
    await scheduler.start();
  }
  let nodeIndex = 0;
  const cluster: TestCluster = {
    client: api.client, service: api.service, store: api.store, manager, scheduler, agents,
    async addNode(name, options) {
      const runtime = buildVirtualRuntime({ timeScale, ...(o.runtime ?? {}) });
      const agent = buildNodeAgent({
        client: api.client, nodeName: name, runtime,
        options: { timeScale, nodeIP: `172.18.0.${2 + nodeIndex++}`, ...(options ?? {}) },
      });
      await agent.start();
      agents.set(name, agent);
      api.runtimes.set(name, runtime);
      return agent;
    },
    async close() {
      for (const a of agents.values()) await a.stop();
      scheduler?.stop();
      await manager?.stop();
      await api.close();
    },
  };
  for (const n of o.nodes ?? []) {
    if (typeof n === 'string') await cluster.addNode(n);
    else await cluster.addNode(n.name, n.options);
  }
  return cluster;
}

/** Polls `fn` until it returns a truthy value (or stops throwing); rejects after `ms`. */
export async function waitFor<T>(fn: () => Promise<T> | T, ms = 20_000, what = 'condition'):
  Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (e) { last = e; }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const ref = (resource: string, namespace?: string, group = '', version = 'v1'):
  ResourceRef => ({ group, version, resource, ...(namespace ? { namespace } : {}) });

export async function listItems<T extends KubeObject>(c: Client, r: ResourceRef,
  labelSelector?: string): Promise<T[]> {
  return (await c.list<T>(r, labelSelector ? { labelSelector } : {})).items;
}
