import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '../..');
const LOADER = pathToFileURL(join(ROOT, 'bin/bundle-cache.js')).href;

function load(entry: string, cache: string): string {
  const script = `const m = await (await import(${JSON.stringify(LOADER)}))`
    + `.importBundled(${JSON.stringify(entry)}, 't'); console.log(m.value);`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script],
    { env: { ...process.env, KDP_CACHE_DIR: cache }, encoding: 'utf8' }).trim();
}

/** The entry's bundled file of the build the cache's meta file names. */
function bundled(cache: string): string {
  const meta = JSON.parse(readFileSync(join(cache, 't.meta.json'), 'utf8')) as { dir: string };
  return join(cache, meta.dir, 'main.mjs');
}

describe('the bundle cache that exec’d entry points start from', () => {
  it('bundles a TypeScript entry once and rebuilds it when an imported file changes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-bundle-'));
    try {
      writeFileSync(join(dir, 'entry.ts'), "import { n } from './dep.js';\nexport const value: number = n;\n");
      writeFileSync(join(dir, 'dep.ts'), 'export const n = 1;\n');
      const entry = relative(ROOT, join(dir, 'entry.ts'));
      const cache = join(dir, 'cache');
      expect(load(entry, cache)).toBe('1');
      expect(readFileSync(bundled(cache), 'utf8')).toContain('n = 1');
      writeFileSync(join(dir, 'dep.ts'), 'export const n = 22;\n');
      expect(load(entry, cache)).toBe('22');
      expect(readFileSync(bundled(cache), 'utf8')).toContain('n = 22');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('falls back to running the source when the cache cannot be written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-bundle-'));
    try {
      writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
      writeFileSync(join(dir, 'entry.ts'), 'export const value: string = "from source";\n');
      writeFileSync(join(dir, 'file'), '');
      const entry = relative(ROOT, join(dir, 'entry.ts'));
      expect(load(entry, join(dir, 'file', 'cache'))).toBe('from source');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('splits the bundle at dynamic imports, so what a command does not run is not loaded', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-bundle-'));
    try {
      writeFileSync(join(dir, 'entry.ts'),
        "export const value: number = (await import('./heavy.js')).n + 1;\n");
      writeFileSync(join(dir, 'heavy.ts'), 'export const n = 41; // heavy-marker\n');
      const cache = join(dir, 'cache');
      expect(load(relative(ROOT, join(dir, 'entry.ts')), cache)).toBe('42');
      const main = readFileSync(bundled(cache), 'utf8');
      expect(main).not.toContain('heavy-marker');
      expect(main).toMatch(/import\("\.\/chunk-[A-Z0-9]+\.mjs"\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('kdp\'s own entry does not load the API server\'s packages before a command needs them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-bundle-'));
    try {
      const script = `await (await import(${JSON.stringify(LOADER)})).importBundled('src/cli/main.ts', 't');`;
      execFileSync(process.execPath, ['--input-type=module', '-e', script],
        { env: { ...process.env, KDP_CACHE_DIR: dir }, encoding: 'utf8' });
      const main = readFileSync(bundled(dir), 'utf8');
      for (const pkg of ['fastify', '@peculiar/x509', 'pino']) expect(main).not.toContain(`from "${pkg}"`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
