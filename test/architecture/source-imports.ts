// Reads kdp's own sources for the architecture tests: every .ts file under src/ and the module
// specifiers it imports (static, dynamic and `export … from`), resolved to paths under src/.

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SRC = join(ROOT, 'src');

export interface SourceFile {
  /** `src/host/exec.ts` */
  readonly path: string;
  readonly text: string;
}

export function sourceFiles(dir = SRC): SourceFile[] {
  const out: SourceFile[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (/\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts')) {
      out.push({ path: relative(ROOT, p), text: readFileSync(p, 'utf8') });
    }
  }
  return out;
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)(['"])([^'"]+)\1/gm;

/** Every module `f` imports: `node:…` and package names as written, kdp's own files as
 *  `src/…/x.ts` paths. */
export function importsOf(f: SourceFile): string[] {
  const out: string[] = [];
  for (const m of f.text.matchAll(SPECIFIER)) {
    const spec = m[2]!;
    if (!spec.startsWith('.')) {
      out.push(spec);
      continue;
    }
    out.push(relative(ROOT, resolve(ROOT, dirname(f.path), spec)).replace(/\.js$/, '.ts'));
  }
  return out;
}
