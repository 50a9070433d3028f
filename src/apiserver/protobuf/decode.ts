// Schema-driven decoding of a protobuf message into upstream's JSON shape. gogo-protobuf writes
// every non-pointer field even when empty, so zero values ('' 0 false {} []) are dropped unless
// the field is a pointer (then presence is the point: `replicas: 0`). Unknown fields are
// skipped by wire type.

import { setOwn } from '../patch/own.js';
import { kdpError } from '../../errors.js';
import type { Field, MessageSchema, Scalar } from './schema.js';
import { ProtoReader, WIRE_LEN, WIRE_VARINT } from './wire.js';

type Json = string | number | boolean | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

function wrongWire(field: Field, wireType: number): never {
  throw kdpError('KDP_BAD_REQUEST',
    `protobuf field ${JSON.stringify(field.name)} has wire type ${wireType}, not the expected one`);
}

function rfc3339(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function decodeScalarMessage(type: 'intOrString' | 'quantity' | 'time', r: ProtoReader):
  Json | undefined {
  const parts = new Map<number, Json>();
  while (!r.done) {
    const t = r.tag();
    if (t.wireType === WIRE_VARINT) parts.set(t.field, r.int());
    else if (t.wireType === WIRE_LEN) parts.set(t.field, r.string());
    else r.skip(t.wireType);
  }
  if (type === 'quantity') return (parts.get(1) as string | undefined) ?? '';
  if (type === 'time') {
    return parts.size === 0 ? undefined : rfc3339(Number(parts.get(1) ?? 0));
  }
  // IntOrString {1: type (0 int, 1 string), 2: intVal, 3: strVal}
  return parts.get(1) === 1 ? (parts.get(3) ?? '') : (parts.get(2) ?? 0);
}

function readValue(type: Scalar | MessageSchema, field: Field, r: ProtoReader, wireType: number):
  Json | undefined {
  if (typeof type === 'object') {
    if (wireType !== WIRE_LEN) wrongWire(field, wireType);
    return decodeMessage(type, r.sub());
  }
  switch (type) {
    case 'int':
    case 'bool': {
      if (wireType !== WIRE_VARINT) wrongWire(field, wireType);
      const v = r.int();
      return type === 'bool' ? v !== 0 : v;
    }
    case 'string':
      if (wireType !== WIRE_LEN) wrongWire(field, wireType);
      return r.string();
    case 'bytes':
      if (wireType !== WIRE_LEN) wrongWire(field, wireType);
      return Buffer.from(r.bytes()).toString('base64');
    default:
      if (wireType !== WIRE_LEN) wrongWire(field, wireType);
      return decodeScalarMessage(type, r.sub());
  }
}

function readMapEntry(field: Field, r: ProtoReader): [string, Json] {
  let key = '';
  let value: Json | undefined;
  while (!r.done) {
    const t = r.tag();
    if (t.field === 1 && t.wireType === WIRE_LEN) key = r.string();
    else if (t.field === 2) value = readValue(field.type, field, r, t.wireType);
    else r.skip(t.wireType);
  }
  if (value === undefined) value = field.type === 'quantity' || field.type === 'string' ||
    field.type === 'bytes' ? '' : {};
  return [key, value];
}

function isEmpty(v: Json | undefined): boolean {
  if (v === undefined || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v).length === 0;
}

const fieldsByName = new WeakMap<MessageSchema, Map<string, Field>>();

function byName(schema: MessageSchema): Map<string, Field> {
  let m = fieldsByName.get(schema);
  if (!m) {
    m = new Map(Object.values(schema).map((f) => [f.name, f]));
    fieldsByName.set(schema, m);
  }
  return m;
}

export function decodeMessage(schema: MessageSchema, r: ProtoReader): JsonObject {
  const out: JsonObject = {};
  const present = new Set<string>();
  while (!r.done) {
    const t = r.tag();
    const field = schema[t.field];
    if (!field) {
      r.skip(t.wireType);
      continue;
    }
    if (field.map) {
      if (t.wireType !== WIRE_LEN) wrongWire(field, t.wireType);
      const [k, v] = readMapEntry(field, r.sub());
      const obj = (out[field.name] ??= {}) as JsonObject;
      setOwn(obj, k, v); // k is request data (`__proto__` is a key, not the prototype)
    } else if (field.repeated) {
      const v = readValue(field.type, field, r, t.wireType);
      ((out[field.name] ??= []) as Json[]).push(v ?? {});
    } else if (field.inline) {
      Object.assign(out, readValue(field.type, field, r, t.wireType));
    } else {
      const v = readValue(field.type, field, r, t.wireType);
      if (v === undefined) continue;
      out[field.name] = v;
      if (field.pointer) present.add(field.name);
    }
  }
  const fields = byName(schema);
  for (const [k, v] of Object.entries(out)) {
    const field = fields.get(k);
    if (field?.map || field?.repeated || present.has(k)) continue;
    if (isEmpty(v)) delete out[k];
  }
  return out;
}
