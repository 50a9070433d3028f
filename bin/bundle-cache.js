// Loads a TypeScript entry point from a cached single-file bundle, for programs that are exec'd
// often (a CNI plugin pays Node's start-up on every call): tsx's loader costs ~0.25 s per start,
// a prebuilt bundle ~0.02 s, and kdp has no build step.
//
// Contract: the bundle is rebuilt with esbuild whenever any of its source files changed (size or
// mtime, recorded beside it), written to a temporary name and renamed, so concurrent starts never
// read half a file. Packages stay external (resolved from node_modules as usual). If the cache
// cannot be read or written, or esbuild is missing, the entry runs through tsx as before.
// `import.meta.url` (and `.dirname`/`.filename`) keep meaning each source file's own location, so
// paths made relative to a module (helper scripts, data files) resolve as they do unbundled.
import { createHash } from 'node:crypto';
import {
  existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function cacheDir() {
  return process.env.KDP_CACHE_DIR || join(ROOT, 'node_modules', '.cache', 'kdp');
}

function stamp(file) {
  const st = statSync(join(ROOT, file));
  return `${st.size}:${st.mtimeMs}`;
}

function fresh(metaPath) {
  try {
    const meta = JSON.parse(readFileSync(metaPath, 'utf8'));
    if (!meta.dir || !existsSync(join(dirname(metaPath), meta.dir, 'main.mjs'))) return false;
    for (const [file, s] of Object.entries(meta.inputs)) if (stamp(file) !== s) return false;
    return true;
  } catch {
    return false;
  }
}

/** esbuild plugin: `import.meta.*` of each bundled source file becomes that file's own value. */
const ownImportMeta = {
  name: 'own-import-meta',
  setup(b) {
    b.onLoad({ filter: /\.[cm]?ts$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta')) return { contents: text, loader: 'ts' };
      const contents = text
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path)))
        .replaceAll('import.meta.filename', JSON.stringify(args.path));
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * Builds `entry` split at its dynamic imports (each command loads only what it runs: a start of
 * `kdp status` does not load the API server's packages), into a directory named by a hash of
 * the output. Directories are never rewritten, only added: a long-running process that loads a
 * chunk later still finds the build it started from. Old ones are pruned after a day.
 */
async function build(entry, name, metaPath) {
  const { build: esbuild } = await import('esbuild');
  const outdir = join(ROOT, '.kdp-bundle-out');
  const r = await esbuild({
    absWorkingDir: ROOT, entryPoints: { main: entry }, bundle: true, platform: 'node', format: 'esm',
    target: 'node20', packages: 'external', metafile: true, write: false, logLevel: 'silent',
    splitting: true, outdir, chunkNames: 'chunk-[hash]', outExtension: { '.js': '.mjs' },
    plugins: [ownImportMeta],
  });
  // Stamps are taken after the build: a file edited during it makes the next start rebuild.
  const inputs = {};
  for (const file of Object.keys(r.metafile.inputs)) inputs[file] = stamp(file);
  const files = r.outputFiles.map((f) => ({ rel: relative(outdir, f.path), contents: f.contents }))
    .sort((a, b) => (a.rel < b.rel ? -1 : 1));
  const hash = createHash('sha256');
  for (const f of files) hash.update(f.rel).update(f.contents);
  const dirName = `${name}-${hash.digest('hex').slice(0, 12)}`;
  const dir = join(cacheDir(), dirName);
  if (!existsSync(dir)) {
    const tmp = `${dir}.${process.pid}.tmp`;
    mkdirSync(tmp, { recursive: true });
    for (const f of files) writeFileSync(join(tmp, f.rel), f.contents);
    try {
      renameSync(tmp, dir);
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      if (!existsSync(dir)) throw e; // else a concurrent start wrote the same build
    }
  }
  writeFileSync(`${metaPath}.${process.pid}.tmp`, JSON.stringify({ entry, dir: dirName, inputs }));
  renameSync(`${metaPath}.${process.pid}.tmp`, metaPath);
  prune(name, dirName);
}

/** Removes other builds of `name` unused for a day (best effort). */
function prune(name, keep) {
  try {
    for (const d of readdirSync(cacheDir())) {
      if (d === keep || !d.startsWith(`${name}-`)) continue;
      const p = join(cacheDir(), d);
      if (Date.now() - statSync(p).mtimeMs > 86_400_000) rmSync(p, { recursive: true, force: true });
    }
  } catch {
    // a cache that cannot be listed is not worth failing a start over
  }
}

/** Imports `entry` (a path relative to the package root) and returns its module namespace. */
export async function importBundled(entry, name) {
  const metaPath = join(cacheDir(), `${name}.meta.json`);
  try {
    mkdirSync(cacheDir(), { recursive: true });
    if (!fresh(metaPath)) await build(entry, name, metaPath);
    const { dir } = JSON.parse(readFileSync(metaPath, 'utf8'));
    return await import(pathToFileURL(join(cacheDir(), dir, 'main.mjs')).href);
  } catch {
    const { register } = await import('tsx/esm/api');
    register();
    return import(pathToFileURL(join(ROOT, entry)).href);
  }
}
