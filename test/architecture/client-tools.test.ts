// Client-side tools sit where the clients are. The scheduler, the controllers, the kubelet and
// kube-proxy are peers that each talk to the API server through src/client: the work queue and
// the event recorder they all use live beside the client, node-affinity and taint matching (the
// scheduler's and the DaemonSet controller's, upstream's component-helpers) beside the API
// types, and `KubeObject` is the API's. So no component imports another (the scheduler and the
// controllers imported each other), the client imports no component, and api/ depends on
// nothing above it.

import { describe, expect, it } from 'vitest';
import { importsOf, sourceFiles, type SourceFile } from './source-imports.js';

const COMPONENTS = ['scheduler', 'controllers', 'kubelet', 'proxy'] as const;

/** `from → to` for every import of a file under `from/` into one of `to/`. */
function edges(files: readonly SourceFile[], from: string, to: readonly string[]): string[] {
  return files.filter((f) => f.path.startsWith(`src/${from}/`)).flatMap((f) =>
    importsOf(f).filter((i) => to.some((t) => i.startsWith(`src/${t}/`))).map((i) => `${f.path} → ${i}`));
}

describe('client-side tools beside the client', () => {
  const files = sourceFiles();

  it('no component imports another', () => {
    const wrong = COMPONENTS.flatMap((c) => edges(files, c, COMPONENTS.filter((o) => o !== c)));
    expect(wrong).toEqual([]);
  });

  it('the client imports no component', () => {
    expect(edges(files, 'client', COMPONENTS)).toEqual([]);
  });

  it('the work queue and the event recorder are the client\'s, and every component uses them', () => {
    const users = (tool: string) => COMPONENTS.filter((c) => files.some((f) =>
      f.path.startsWith(`src/${c}/`) && importsOf(f).includes(`src/client/${tool}.ts`)));
    expect(users('events')).toEqual(['scheduler', 'controllers', 'kubelet', 'proxy']);
    expect(users('workqueue')).toEqual(['scheduler', 'controllers', 'kubelet']);
  });

  it('KubeObject is the API\'s; api/ imports nothing from the client or a component', () => {
    const decl = /^export interface KubeObject\b/m;
    expect(files.filter((f) => decl.test(f.text)).map((f) => f.path)).toEqual(['src/api/object.ts']);
    const wrong = files.filter((f) => f.path.startsWith('src/api/')).flatMap((f) =>
      importsOf(f).filter((i) => /^src\/(client|scheduler|controllers|kubelet|proxy)\//.test(i))
        .map((i) => `${f.path} → ${i}`));
    expect(wrong).toEqual([]);
  });

  it('the checks see a forbidden edge (so they can fail)', () => {
    const fake: SourceFile[] = [
      { path: 'src/scheduler/x.ts', text: "import { a } from '../controllers/events.js';\n" },
      { path: 'src/api/y.ts', text: "import type { C } from '../client/types.js';\n" },
    ];
    expect(edges(fake, 'scheduler', ['controllers'])).toEqual(['src/scheduler/x.ts → src/controllers/events.ts']);
    expect(importsOf(fake[1]!)).toEqual(['src/client/types.ts']);
  });
});
