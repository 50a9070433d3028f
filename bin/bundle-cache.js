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
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
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

async function build(entry, outPath, metaPath) {
  const { build: esbuild } = await import('esbuild');
  const r = await esbuild({
    absWorkingDir: ROOT, entryPoints: [entry], bundle: true, platform: 'node', format: 'esm',
    target: 'node20', packages: 'external', metafile: true, write: false, logLevel: 'silent',
    plugins: [ownImportMeta],
  });
  // Stamps are taken after the build: a file edited during it makes the next start rebuild.
  const inputs = {};
  for (const file of Object.keys(r.metafile.inputs)) inputs[file] = stamp(file);
  mkdirSync(dirname(outPath), { recursive: true });
  const tmp = `${outPath}.${process.pid}.tmp`;
  writeFileSync(tmp, r.outputFiles[0].contents);
  renameSync(tmp, outPath);
  writeFileSync(`${metaPath}.${process.pid}.tmp`, JSON.stringify({ entry, inputs }));
  renameSync(`${metaPath}.${process.pid}.tmp`, metaPath);
}

/** Imports `entry` (a path relative to the package root) and returns its module namespace. */
export async function importBundled(entry, name) {
  const outPath = join(cacheDir(), `${name}.mjs`);
  const metaPath = join(cacheDir(), `${name}.meta.json`);
  try {
    if (!fresh(metaPath)) await build(entry, outPath, metaPath);
    return await import(pathToFileURL(outPath).href);
  } catch {
    const { register } = await import('tsx/esm/api');
    register();
    return import(pathToFileURL(join(ROOT, entry)).href);
  }
}
