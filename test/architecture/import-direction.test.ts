// src/host is the kernel boundary: everything above it (kube-proxy's appliers, the kubelet's
// runtime, the CNI plugin, the tracer, the cluster) depends on its interfaces, never the
// reverse. So host may import only itself, the error catalogue, small utilities, the pure
// rule-table models (ruleset/: the fakes of the rule tools parse with them) and the one IP
// module. A host file importing proxy/, kubelet/ or cni/ (proxy/applier.ts ↔ host/rule-applier.ts
// was such a cycle) fails here.

import { describe, expect, it } from 'vitest';
import { importsOf, sourceFiles } from './source-imports.js';

const HOST_MAY_IMPORT = [/^src\/host\//, /^src\/errors\.ts$/, /^src\/util\//, /^src\/ruleset\//,
  /^src\/api\/net\.ts$/];

describe('import direction', () => {
  const files = sourceFiles();

  it('src/host imports nothing above the boundary', () => {
    const wrong = files.filter((f) => f.path.startsWith('src/host/')).flatMap((f) =>
      importsOf(f).filter((i) => i.startsWith('src/') && !HOST_MAY_IMPORT.some((r) => r.test(i)))
        .map((i) => `${f.path} → ${i}`));
    expect(wrong).toEqual([]);
  });

  it('the pure rule-table models import neither the boundary nor kube-proxy', () => {
    const wrong = files.filter((f) => f.path.startsWith('src/ruleset/')).flatMap((f) =>
      importsOf(f).filter((i) => /^src\/(host|proxy|kubelet|cni|cluster)\//.test(i))
        .map((i) => `${f.path} → ${i}`));
    expect(wrong).toEqual([]);
  });

  it('the scanner sees a forbidden import (so the checks above can fail)', () => {
    const fake = { path: 'src/host/x.ts', text: "import { a } from '../proxy/applier.js';\nconst b = await import('../kubelet/launcher.js');\n" };
    expect(importsOf(fake)).toEqual(['src/proxy/applier.ts', 'src/kubelet/launcher.ts']);
  });
});
