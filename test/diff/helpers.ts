// Builders for the diff tests: whole tables compiled from a scenario's objects, and a runner
// that diffs two texts through the same code path as the CLI.

import type { KubeObject } from '../../src/api/types.js';
import { runDiff, type DiffView } from '../../src/diff/diff.js';
import { detectFormat } from '../../src/diff/load.js';
import type { ProxyMode } from '../../src/proxy/backend.js';
import { compileOffline } from '../../src/proxy/compile.js';
import { compileOptions, loadScenario } from '../helpers/scenarios.js';

export async function compileScenario(name: string, mode: ProxyMode,
  edit?: (objects: KubeObject[]) => KubeObject[], step?: string): Promise<string> {
  const s = loadScenario(name);
  const base = step ? s.steps.find((x) => x.name === step)!.objects : s.objects;
  const objects = edit ? edit(structuredClone([...base])) : base;
  return compileOffline(compileOptions(s, mode, true, objects));
}

export function diffTexts(a: string, b: string, view: DiffView = 'semantic',
  nodeIPs: readonly string[] = ['172.18.0.2']) {
  const table = (text: string, label: string) => ({ label, text, format: detectFormat(text, label) });
  return runDiff(table(a, 'a'), table(b, 'b'), {
    view, json: false, colour: false, nodeIPs, podCIDRs: ['10.244.0.0/24'],
  });
}

/** The semantic lines (one per change) of a diff. */
export function semanticLines(a: string, b: string): string[] {
  const out = diffTexts(a, b).text.trimEnd().split('\n');
  return /^no (semantic )?difference/.test(out[0]!) ? [] : out;
}

export function byName<T extends KubeObject>(objects: KubeObject[], kind: string,
  name: string): T {
  return objects.find((o) => o.kind === kind && o.metadata?.name === name) as T;
}
