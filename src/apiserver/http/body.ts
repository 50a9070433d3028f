// Request bodies arrive as raw buffers (one catch-all content-type parser) and are decoded
// here by media type: JSON (also when no Content-Type is sent), YAML, or Kubernetes protobuf.

import { parse as parseYaml } from 'yaml';
import { kdpError } from '../../errors.js';
import { decodeKubernetesProtobuf, isProtobufContentType } from '../protobuf/index.js';
import { deeperThan, MAX_DEPTH, tooDeep, yamlTextDepthBound } from './depth.js';
import { mediaType } from './media.js';

const JSON_TYPES = new Set(['', 'application/json', 'application/json-patch+json',
  'application/merge-patch+json', 'application/strategic-merge-patch+json']);
/** What a create, update or delete body may be (upstream NegotiateInputSerializer). */
const OBJECT_TYPES = new Set(['', 'application/json', 'application/yaml', 'text/yaml']);
const YAML_TYPES = new Set(['application/yaml', 'application/apply-patch+yaml', 'text/yaml']);

export function unsupportedMediaType(ct: string): Error {
  return kdpError('KDP_UNSUPPORTED_MEDIA_TYPE',
    'the body of the request was in an unknown format - accepted media types include: ' +
    'application/json, application/yaml, application/vnd.kubernetes.protobuf ' +
    `(got ${JSON.stringify(ct)})`);
}

/** What upstream's decoder of each JSON body type says of one nested too deep. */
function jsonDepthMessage(mt: string): string {
  if (mt === 'application/merge-patch+json') return 'Invalid JSON Patch';
  if (mt === 'application/json-patch+json' || mt === 'application/strategic-merge-patch+json') {
    return 'exceeded max depth';
  }
  return "couldn't get version/kind; json parse error: exceeded max depth";
}

/**
 * Decodes a body; undefined for an empty one. Malformed or nested deeper than MAX_DEPTH → 400,
 * unknown type → 415; an `objectBody` (create, update, delete) is not taken in a patch type.
 */
export function decodeBody(contentType: string | undefined, raw: unknown,
  objectBody = false): unknown {
  const buf = Buffer.isBuffer(raw) ? raw : raw === undefined ? undefined : Buffer.from(String(raw));
  const mt = mediaType(contentType);
  if (objectBody && buf?.length && !OBJECT_TYPES.has(mt) &&
    !isProtobufContentType(contentType)) {
    throw unsupportedMediaType(mt);
  }
  if (isProtobufContentType(contentType)) {
    if (!buf?.length) return undefined;
    return decodeKubernetesProtobuf(buf);
  }
  if (!buf?.length) {
    if (JSON_TYPES.has(mt) || YAML_TYPES.has(mt)) return undefined;
    throw unsupportedMediaType(mt);
  }
  const text = buf.toString('utf8');
  if (JSON_TYPES.has(mt)) {
    let v: unknown;
    try {
      v = JSON.parse(text); // V8's parser does not recurse: any depth decodes
    } catch (e) {
      throw kdpError('KDP_BAD_REQUEST', `error decoding JSON body: ${(e as Error).message}`);
    }
    // Valid JSON that deep has two characters per level: short text is not walked.
    if (text.length > 2 * MAX_DEPTH && deeperThan(v, MAX_DEPTH)) {
      throw tooDeep(jsonDepthMessage(mt));
    }
    return v;
  }
  if (YAML_TYPES.has(mt)) {
    // The parser recurses per level: bound the text before it sees it, the result after
    // (aliases can nest what they repeat).
    if (yamlTextDepthBound(text) > MAX_DEPTH) throw tooDeep('error decoding YAML: ' +
      'exceeded max depth');
    let v: unknown;
    try {
      v = parseYaml(text);
    } catch (e) {
      throw kdpError('KDP_BAD_REQUEST', `error decoding YAML body: ${(e as Error).message}`);
    }
    if (deeperThan(v, MAX_DEPTH)) throw tooDeep('error decoding YAML: exceeded max depth');
    return v;
  }
  throw unsupportedMediaType(mt);
}
