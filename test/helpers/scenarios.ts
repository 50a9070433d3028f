// Loads the golden scenarios of `rules/` (layout in rules/README.md) and drives them through a
// backend: a first full sync of `objects.yaml`, then one partial sync per `steps/*.yaml` (each
// step file is the whole object set at that point; the difference becomes watch events).

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYAML } from 'yaml';
import { loadObjectsFromText } from '../../src/api/load.js';
import type { EndpointSlice, KubeObject, Service } from '../../src/api/types.js';
import type { BackendModule, CompileOptions } from '../../src/proxy/compile.js';
import { compileConfigs, feedObjects } from '../../src/proxy/compile.js';
import type { ProxyMode, SyncResult } from '../../src/proxy/backend.js';
import { ProxyPipeline } from '../../src/proxy/pipeline.js';

export const RULES_DIR = resolve(import.meta.dirname, '../../rules');

export interface ScenarioNode {
  readonly name: string;
  readonly ips: readonly string[];
  readonly podCIDRs: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly capabilities: { readonly randomFully: boolean; readonly nfacct: boolean };
}

export interface ScenarioStep {
  /** File name without `.yaml`, e.g. `1-add`. */
  readonly name: string;
  readonly objects: readonly KubeObject[];
}

export interface Scenario {
  readonly name: string;
  readonly dir: string;
  readonly objects: readonly KubeObject[];
  readonly configText: string;
  readonly node: ScenarioNode;
  readonly steps: readonly ScenarioStep[];
}

function loadObjects(file: string): KubeObject[] {
  return loadObjectsFromText(readFileSync(file, 'utf8'), file).map((o) => o.object);
}

/** Scenario folder names (`NN-name`), sorted. */
export function listScenarios(root = RULES_DIR): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && /^\d\d-/.test(d.name)).map((d) => d.name).sort();
}

export function loadScenario(name: string, root = RULES_DIR): Scenario {
  const dir = join(root, name);
  const node = parseYAML(readFileSync(join(dir, 'node.yaml'), 'utf8')) as Partial<ScenarioNode>;
  const stepsDir = join(dir, 'steps');
  const steps = existsSync(stepsDir)
    ? readdirSync(stepsDir).filter((f) => f.endsWith('.yaml')).sort().map((f) => ({
      name: f.replace(/\.yaml$/, ''), objects: loadObjects(join(stepsDir, f)),
    }))
    : [];
  return {
    name, dir,
    objects: loadObjects(join(dir, 'objects.yaml')),
    configText: readFileSync(join(dir, 'config.yaml'), 'utf8'),
    node: {
      name: node.name ?? 'node-a', ips: node.ips ?? [], podCIDRs: node.podCIDRs ?? [],
      labels: node.labels ?? {},
      capabilities: {
        randomFully: node.capabilities?.randomFully ?? false,
        nfacct: node.capabilities?.nfacct ?? false,
      },
    },
    steps,
  };
}

/** The `compileOffline` options of a scenario (objects = `objects.yaml` unless given). */
export function compileOptions(s: Scenario, mode: ProxyMode, canonical = true,
  objects: readonly KubeObject[] = s.objects): CompileOptions {
  return {
    objects, configText: s.configText, mode, nodeName: s.node.name, nodeIPs: s.node.ips,
    canonical, nodeLabels: s.node.labels, podCIDRs: s.node.podCIDRs,
    capabilities: s.node.capabilities,
  };
}

/** `rules/<scenario>/<mode>.golden`, or `<mode>.<step>.golden` for a step. */
export function goldenPath(s: Scenario, mode: string, step?: string): string {
  return join(s.dir, step === undefined ? `${mode}.golden` : `${mode}.${step}.golden`);
}

const idOf = (o: KubeObject) => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;

/** Feeds the difference between two object sets to a pipeline as watch events. */
export function feedDiff(p: ProxyPipeline, prev: readonly KubeObject[],
  next: readonly KubeObject[]): void {
  const before = new Map(prev.map((o) => [idOf(o), o]));
  const after = new Map(next.map((o) => [idOf(o), o]));
  for (const [id, o] of before) {
    if (after.has(id)) continue;
    if (o.kind === 'Service') p.onService(o as Service, undefined);
    if (o.kind === 'EndpointSlice') p.onEndpointSlice(o as EndpointSlice, true);
  }
  for (const [id, o] of after) {
    const old = before.get(id);
    if (old && JSON.stringify(old) === JSON.stringify(o)) continue;
    if (o.kind === 'Service') p.onService(old as Service | undefined, o as Service);
    if (o.kind === 'EndpointSlice') p.onEndpointSlice(o as EndpointSlice);
  }
}

export interface SequenceResult {
  readonly name: string;
  readonly result: SyncResult;
}

/**
 * Runs a scenario's sequence on one backend (first family only): full sync of `objects.yaml`,
 * then each step; every sync is committed as applied.
 */
export function runSequence(s: Scenario, mode: ProxyMode, backend: BackendModule):
  { pipeline: ProxyPipeline; results: SequenceResult[] } {
  const config = compileConfigs(compileOptions(s, mode))[0]!;
  const pipeline = new ProxyPipeline(backend.buildProxier(config));
  feedObjects(pipeline, s.objects);
  const results: SequenceResult[] = [{ name: 'initial', result: pipeline.sync() }];
  pipeline.commit(true);
  let prev = s.objects;
  for (const step of s.steps) {
    feedDiff(pipeline, prev, step.objects);
    results.push({ name: step.name, result: pipeline.sync() });
    pipeline.commit(true);
    prev = step.objects;
  }
  return { pipeline, results };
}
