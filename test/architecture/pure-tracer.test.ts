// The tracer is pure: it walks packets through rule tables it is given (src/trace, its mode
// filters in trace/<mode>/), with no namespaces, probes or captures. Live tracing, the lab
// orchestrator that builds namespaces, sends probes and reads the kernel's own traces, is
// src/trace/live/, which uses the pure tracer and never the reverse.

import { describe, expect, it } from 'vitest';
import { importsOf, sourceFiles, type SourceFile } from './source-imports.js';

const PROCESS_STARTERS = ['node:child_process', 'child_process', 'src/host/spawn.ts', 'src/host/exec.ts'];

function impurities(files: readonly SourceFile[]): string[] {
  return files.filter((f) => f.path.startsWith('src/trace/') && !f.path.startsWith('src/trace/live/'))
    .flatMap((f) => importsOf(f)
      .filter((i) => i.startsWith('src/trace/live/') || PROCESS_STARTERS.includes(i))
      .map((i) => `${f.path} → ${i}`));
}

describe('the pure tracer and live tracing', () => {
  it('the pure tracer imports nothing of live tracing and starts no process', () => {
    expect(impurities(sourceFiles())).toEqual([]);
  });

  it('live tracing is built on the pure tracer', () => {
    const live = sourceFiles().filter((f) => f.path.startsWith('src/trace/live/'));
    const uses = new Set(live.flatMap((f) => importsOf(f)).filter((i) => /^src\/trace\/[^/]+\.ts$/.test(i)));
    expect(uses.has('src/trace/cluster.ts') && uses.has('src/trace/offline.ts')).toBe(true);
  });

  it('the check sees a pure file importing live tracing (so it can fail)', () => {
    const fake = [{ path: 'src/trace/walk.ts', text: "import { x } from './live/lab.js';\nimport { y } from 'node:child_process';\n" }];
    expect(impurities(fake)).toEqual(['src/trace/walk.ts → src/trace/live/lab.ts', 'src/trace/walk.ts → node:child_process']);
  });
});
