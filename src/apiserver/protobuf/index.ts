// Decoding of `application/vnd.kubernetes.protobuf` request bodies: the `k8s\0` magic, the
// runtime.Unknown envelope {1: typeMeta {1: apiVersion, 2: kind}, 2: raw, 3: contentEncoding,
// 4: contentType}, then `raw` by the kind's field table. Only the kinds kubectl's typed clients
// send are known; others are KDP_UNSUPPORTED_MEDIA_TYPE. Responses are always JSON.

import type { KubeObject } from '../../client/types.js';
import { kdpError } from '../../errors.js';
import { decodeMessage } from './decode.js';
import { OBJECTS } from './schema.js';
import { ProtoReader, WIRE_LEN } from './wire.js';

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** True for `application/vnd.kubernetes.protobuf` (parameters ignored). */
export function isProtobufContentType(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === PROTOBUF_CONTENT_TYPE;
}

/** `apiVersion/kind` pairs that `decodeKubernetesProtobuf` can decode. */
export function supportedProtobufKinds(): string[] {
  return Object.keys(OBJECTS);
}

interface Envelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
}

function readEnvelope(body: Buffer): Envelope {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) {
    throw kdpError('KDP_BAD_REQUEST', 'provided data does not appear to be a protobuf message, ' +
      'expected prefix [107 56 115 0]');
  }
  const env: Envelope = { apiVersion: '', kind: '', raw: new Uint8Array(), contentEncoding: '' };
  const r = new ProtoReader(body, 4);
  while (!r.done) {
    const t = r.tag();
    if (t.wireType !== WIRE_LEN) { r.skip(t.wireType); continue; }
    if (t.field === 1) {
      const tm = r.sub();
      while (!tm.done) {
        const tt = tm.tag();
        if (tt.field === 1 && tt.wireType === WIRE_LEN) env.apiVersion = tm.string();
        else if (tt.field === 2 && tt.wireType === WIRE_LEN) env.kind = tm.string();
        else tm.skip(tt.wireType);
      }
    } else if (t.field === 2) env.raw = r.bytes();
    else if (t.field === 3) env.contentEncoding = r.string();
    else r.skip(t.wireType);
  }
  return env;
}

/** Decodes a Kubernetes protobuf body into the object's JSON form. */
export function decodeKubernetesProtobuf(body: Buffer): KubeObject {
  const env = readEnvelope(body);
  if (env.contentEncoding !== '') {
    throw kdpError('KDP_UNSUPPORTED_MEDIA_TYPE',
      `protobuf content encoding ${JSON.stringify(env.contentEncoding)} is not supported`);
  }
  const key = `${env.apiVersion}/${env.kind}`;
  const schema = OBJECTS[key];
  if (!schema) {
    throw kdpError('KDP_UNSUPPORTED_MEDIA_TYPE',
      `kdp cannot decode ${env.kind || '<no kind>'} (${env.apiVersion || '<no apiVersion>'}) ` +
      `from ${PROTOBUF_CONTENT_TYPE}; send it as application/json (protobuf is decoded for: ` +
      `${supportedProtobufKinds().map((k) => k.split('/').pop()).join(', ')})`);
  }
  const decoded = decodeMessage(schema, new ProtoReader(env.raw));
  const out: Record<string, unknown> = { apiVersion: env.apiVersion, kind: env.kind, ...decoded };
  // Objects always carry metadata; options messages (DeleteOptions) have none.
  if (Object.values(schema).some((f) => f.name === 'metadata')) out.metadata ??= {};
  return out as KubeObject;
}
