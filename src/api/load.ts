// Reads ordinary Kubernetes manifests (what `kubectl apply -f` takes): YAML or JSON, several
// documents separated by `---`, comments, `kind: List` and typed `*List` wrappers whose items
// are flattened. Every object keeps its source so errors and the CLI can point at it.
// YAML is read as YAML 1.1 with merge keys, like sigs.k8s.io/yaml (go-yaml v2), so `yes`/`on`
// are booleans as kubectl sees them. Problems are KDP_INPUT naming file, document and field.
// Input is bounded: a file is at most MAX_MANIFEST_BYTES and a document may expand at most
// MAX_YAML_ALIASES aliases (a "billion laughs" document is refused, not expanded).

import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isKdpError, kdpError } from '../errors.js';
import type { KubeObject } from './object.js';
import { buildRegistry, type ResourceRegistry } from './registry.js';

/** Largest manifest file (or stdin text) read: far above any real object set. */
export const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;

/** Aliases one document may resolve (the `yaml` library's maxAliasCount; its default too). */
export const MAX_YAML_ALIASES = 100;

export interface ObjectSource {
  readonly file: string;
  /** 1-based document number within the file. */
  readonly document: number;
  /** 0-based index inside a List document, when the object came from one. */
  readonly item?: number;
}

export interface LoadedObject {
  readonly object: KubeObject;
  readonly source: ObjectSource;
}

export interface LoadOptions {
  /** Kinds are checked against this registry (default: the built-in one). */
  readonly registry?: ResourceRegistry;
  /** Accept kinds the registry does not know (kept as plain objects). */
  readonly allowUnknownKinds?: boolean;
}

/** `file: document 2: item 0: spec: message` — the one place sources are worded. */
export function describeSource(src: ObjectSource): string {
  const item = src.item === undefined ? '' : `: item ${src.item}`;
  return `${src.file}: document ${src.document}${item}`;
}

function inputError(src: ObjectSource, field: string, msg: string, cause?: unknown): never {
  const where = field ? `${describeSource(src)}: ${field}` : describeSource(src);
  throw kdpError('KDP_INPUT', `${where}: ${msg}`, {
    causes: [{ field, reason: 'FieldValueInvalid', message: msg }],
  }, cause);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function checkObject(v: unknown, src: ObjectSource, opts: LoadOptions, reg: ResourceRegistry)
  : KubeObject {
  if (!isPlainObject(v)) inputError(src, '', 'document is not an object (a mapping)');
  const { apiVersion, kind } = v;
  if (typeof apiVersion !== 'string' || apiVersion === '') {
    inputError(src, 'apiVersion', "Required value: 'apiVersion' must be set");
  }
  if (typeof kind !== 'string' || kind === '') {
    inputError(src, 'kind', "Required value: 'kind' must be set");
  }
  if (v.metadata === undefined || v.metadata === null) v.metadata = {};
  if (!isPlainObject(v.metadata)) inputError(src, 'metadata', 'must be an object');
  if (!opts.allowUnknownKinds && !reg.byKind(apiVersion, kind)) {
    inputError(src, 'kind', `no matches for kind "${kind}" in version "${apiVersion}"`);
  }
  return v as KubeObject;
}

function isList(v: Record<string, unknown>): boolean {
  return typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items);
}

function loadDocument(v: unknown, src: ObjectSource, opts: LoadOptions, reg: ResourceRegistry,
  out: LoadedObject[]): void {
  if (isPlainObject(v) && isList(v)) {
    (v.items as unknown[]).forEach((item, i) => {
      const itemSrc = { ...src, item: src.item ?? i };
      if (isPlainObject(item) && isList(item)) {
        loadDocument(item, itemSrc, opts, reg, out);
      } else {
        out.push({ object: checkObject(item, itemSrc, opts, reg), source: itemSrc });
      }
    });
    return;
  }
  out.push({ object: checkObject(v, src, opts, reg), source: src });
}

/** Parses manifest text that came from `file` (used only in messages). Empty documents skip. */
export function loadObjectsFromText(text: string, file: string, opts: LoadOptions = {})
  : LoadedObject[] {
  const reg = opts.registry ?? buildRegistry();
  checkSize(Buffer.byteLength(text), file);
  const docs = parseAllDocuments(text, { version: '1.1', merge: true, uniqueKeys: true });
  const out: LoadedObject[] = [];
  docs.forEach((doc, i) => {
    const src: ObjectSource = { file, document: i + 1 };
    const err = doc.errors[0];
    if (err) {
      const pos = err.linePos?.[0];
      const at = pos ? ` at line ${pos.line}, column ${pos.col}` : '';
      inputError(src, '', `invalid YAML${at}: ${err.message.split('\n')[0]}`, err);
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
    } catch (e) {
      // The library throws (ReferenceError) when aliases expand past the limit.
      inputError(src, '', `YAML aliases expand too much (more than ${MAX_YAML_ALIASES} ` +
        'alias uses in one document)', e);
    }
    if (value === null || value === undefined) return;
    loadDocument(value, src, opts, reg, out);
  });
  return out;
}

const MANIFEST_EXT = /\.(ya?ml|json)$/i;

function checkSize(bytes: number, file: string): void {
  if (bytes > MAX_MANIFEST_BYTES) {
    throw kdpError('KDP_INPUT', `${file}: ${bytes} bytes is over the ${MAX_MANIFEST_BYTES}-byte ` +
      'limit for a manifest file');
  }
}

/**
 * Loads files in order; a directory contributes its `*.yaml`, `*.yml`, `*.json` files sorted by
 * name (not recursive), like `kubectl apply -f dir/`. `-` is not handled here.
 */
export async function loadObjectsFromFiles(paths: readonly string[], opts: LoadOptions = {})
  : Promise<LoadedObject[]> {
  const out: LoadedObject[] = [];
  for (const p of paths) {
    let files = [p];
    try {
      if ((await stat(p)).isDirectory()) {
        files = (await readdir(p)).filter((f) => MANIFEST_EXT.test(f)).sort()
          .map((f) => join(p, f));
      }
    } catch (e) {
      throw kdpError('KDP_INPUT', `${p}: cannot read: ${(e as Error).message}`, {}, e);
    }
    for (const f of files) {
      let text: string;
      try {
        const size = (await stat(f)).size;
        text = size > MAX_MANIFEST_BYTES ? '' : await readFile(f, 'utf8');
        checkSize(size, f);
      } catch (e) {
        if (isKdpError(e)) throw e;
        throw kdpError('KDP_INPUT', `${f}: cannot read: ${(e as Error).message}`, {}, e);
      }
      out.push(...loadObjectsFromText(text, f, opts));
    }
  }
  return out;
}
