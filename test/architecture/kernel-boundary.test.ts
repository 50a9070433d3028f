// src/host is the only code that starts processes or writes the kernel's files: everything
// else goes through its interfaces (Spawner/runProgram in spawn.ts, HostExec in exec.ts, the
// namespace, sysctl and rule-table helpers), each with a fake that fails like the real thing.
// This fails when a file outside src/host imports node:child_process (also as `require` in a
// helper's source text, or dynamically) or names a /proc/sys or /sys path.

import { describe, expect, it } from 'vitest';
import { importsOf, sourceFiles, type SourceFile } from './source-imports.js';

const PROCESS_MODULES = new Set(['node:child_process', 'child_process', 'node:cluster', 'cluster']);
/** A string literal that is a path into the kernel's tunables (a comment naming one is fine). */
const KERNEL_FILES = /['"`]\/(proc\/sys|sys)\//;

function boundaryViolations(files: readonly SourceFile[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    if (f.path.startsWith('src/host/')) continue;
    for (const i of importsOf(f)) if (PROCESS_MODULES.has(i)) out.push(`${f.path} imports ${i}`);
    if (/\bspawn_sync\b/.test(f.text)) out.push(`${f.path} uses spawn_sync`);
    const code = f.text.split('\n').filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l));
    for (const l of code) if (KERNEL_FILES.test(l)) out.push(`${f.path} names a kernel file: ${l.trim()}`);
  }
  return out;
}

describe('kernel boundary', () => {
  it('nothing outside src/host starts a process or writes a kernel file', () => {
    expect(boundaryViolations(sourceFiles())).toEqual([]);
  });

  it('the check catches each way around the boundary', () => {
    const bad = (text: string) => boundaryViolations([{ path: 'src/kubelet/x.ts', text }]);
    expect(bad("import { spawn } from 'node:child_process';")).toHaveLength(1);
    expect(bad("import type { ChildProcess } from 'child_process';")).toHaveLength(1);
    expect(bad("const cp = await import('node:child_process');")).toHaveLength(1);
    expect(bad("const SRC = `const { spawn } = require('node:child_process');`;")).toHaveLength(1);
    expect(bad("writeFileSync(`/proc/sys/net/ipv4/${k}`, v);")).toHaveLength(1);
    expect(bad("// writes /proc/sys through host/sysctls.ts\nimport { x } from '../host/spawn.js';")).toEqual([]);
    expect(boundaryViolations([{ path: 'src/host/spawn.ts', text: "import { spawn } from 'node:child_process';" }]))
      .toEqual([]);
  });
});
