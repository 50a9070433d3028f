// `/openapi/v2` as `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`: the Swagger
// document in gnostic's openapi_v2 messages (github.com/google/gnostic-models
// openapiv2/OpenAPIv2.proto, field numbers below), which kubectl before 1.29 asks for. As
// gnostic does, values it keeps as `Any` (defaults, enums, vendor extensions) carry YAML text;
// JSON text is YAML, and that is what kubectl's reader parses.

import type { JsonObject } from './data.js';

const isObj = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * A protobuf message under construction (proto3: default values are left out). Nested messages
 * are kept by reference with their sizes and written once, into one buffer, by `done()`.
 */
class Msg {
  private readonly parts: (number[] | string | Msg)[] = [];
  private pending: number[] = [];
  private size = 0;

  get length(): number {
    return this.size;
  }

  private varint(n: number): void {
    let v = n;
    while (v >= 0x80) {
      this.pending.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.pending.push(v);
  }

  private key(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    this.parts.push(this.pending);
    this.size += this.pending.length;
    this.pending = [];
  }

  /** A length-delimited UTF-8 string (kept as text, encoded straight into the output). */
  private text(field: number, v: string): void {
    const n = Buffer.byteLength(v, 'utf8');
    this.key(field, 2);
    this.varint(n);
    this.flush();
    this.parts.push(v);
    this.size += n;
  }

  str(field: number, v: unknown): this {
    if (typeof v === 'string' && v !== '') this.text(field, v);
    return this;
  }

  strs(field: number, v: unknown): this {
    if (Array.isArray(v)) for (const s of v) if (typeof s === 'string') this.text(field, s);
    return this;
  }

  bool(field: number, v: unknown): this {
    if (v === true) {
      this.key(field, 0);
      this.varint(1);
    }
    return this;
  }

  int(field: number, v: unknown): this {
    if (typeof v === 'number' && v > 0) {
      this.key(field, 0);
      this.varint(v);
    }
    return this;
  }

  double(field: number, v: unknown): this {
    if (typeof v === 'number' && v !== 0) {
      this.key(field, 1);
      const b = Buffer.alloc(8);
      b.writeDoubleLE(v);
      this.pending.push(...b);
    }
    return this;
  }

  msg(field: number, m: Msg | undefined): this {
    if (!m) return this;
    m.flush();
    this.key(field, 2);
    this.varint(m.size);
    this.flush();
    this.parts.push(m);
    this.size += m.size;
    return this;
  }

  done(): Buffer {
    this.flush();
    const out = Buffer.allocUnsafe(this.size);
    const end = this.writeTo(out, 0);
    return end === out.length ? out : out.subarray(0, end);
  }

  private writeTo(out: Buffer, at: number): number {
    let pos = at;
    for (const p of this.parts) {
      if (p instanceof Msg) pos = p.writeTo(out, pos);
      else if (typeof p === 'string') pos += out.write(p, pos, 'utf8');
      else for (const b of p) out[pos++] = b;
    }
    return pos;
  }
}

/** gnostic `Any`: YAML text (field 2). */
function any(v: unknown): Msg {
  return new Msg().str(2, JSON.stringify(v));
}

function extensions(m: Msg, field: number, o: JsonObject): Msg {
  for (const [k, v] of Object.entries(o)) {
    if (k.startsWith('x-')) m.msg(field, new Msg().str(1, k).msg(2, any(v)));
  }
  return m;
}

function schema(s: JsonObject): Msg {
  const m = new Msg().str(1, s.$ref).str(2, s.format).str(3, s.title).str(4, s.description);
  if (s.default !== undefined) m.msg(5, any(s.default));
  m.double(6, s.multipleOf).double(7, s.maximum).bool(8, s.exclusiveMaximum)
    .double(9, s.minimum).bool(10, s.exclusiveMinimum).int(11, s.maxLength).int(12, s.minLength)
    .str(13, s.pattern).int(14, s.maxItems).int(15, s.minItems).bool(16, s.uniqueItems)
    .int(17, s.maxProperties).int(18, s.minProperties).strs(19, s.required);
  if (Array.isArray(s.enum)) for (const e of s.enum) m.msg(20, any(e));
  if (isObj(s.additionalProperties)) m.msg(21, new Msg().msg(1, schema(s.additionalProperties)));
  else if (typeof s.additionalProperties === 'boolean') {
    m.msg(21, new Msg().bool(2, s.additionalProperties));
  }
  if (typeof s.type === 'string') m.msg(22, new Msg().str(1, s.type));
  if (isObj(s.items)) m.msg(23, new Msg().msg(1, schema(s.items)));
  if (Array.isArray(s.allOf)) for (const a of s.allOf) if (isObj(a)) m.msg(24, schema(a));
  if (isObj(s.properties)) {
    const props = new Msg();
    for (const [n, p] of Object.entries(s.properties)) {
      if (isObj(p)) props.msg(1, new Msg().str(1, n).msg(2, schema(p)));
    }
    m.msg(25, props);
  }
  m.str(26, s.discriminator).bool(27, s.readOnly);
  if (s.example !== undefined) m.msg(30, any(s.example));
  return extensions(m, 31, s);
}

/** A query, path or header parameter (their sub-schemas share the leading field numbers). */
function nonBody(p: JsonObject): Msg {
  const where = { header: 1, formData: 2, query: 3, path: 4 }[String(p.in)] ?? 3;
  const sub = new Msg().bool(1, p.required).str(2, p.in).str(3, p.description).str(4, p.name);
  // query and formData have allow_empty_value at 5, shifting the rest by one.
  const shift = where === 2 || where === 3 ? 1 : 0;
  if (shift) sub.bool(5, p.allowEmptyValue);
  sub.str(5 + shift, p.type).str(6 + shift, p.format);
  sub.bool(19 + shift, p.uniqueItems);
  extensions(sub, 22 + shift, p);
  return new Msg().msg(where, sub);
}

function parametersItem(p: JsonObject): Msg {
  if (p.$ref) return new Msg().msg(2, new Msg().str(1, p.$ref));
  if (p.in === 'body') {
    const body = new Msg().str(1, p.description).str(2, p.name).str(3, p.in).bool(4, p.required);
    if (isObj(p.schema)) body.msg(5, schema(p.schema));
    return new Msg().msg(1, new Msg().msg(1, extensions(body, 6, p)));
  }
  return new Msg().msg(1, new Msg().msg(2, nonBody(p)));
}

function operation(op: JsonObject): Msg {
  const m = new Msg().strs(1, op.tags).str(2, op.summary).str(3, op.description)
    .str(5, op.operationId).strs(6, op.produces).strs(7, op.consumes);
  if (Array.isArray(op.parameters)) for (const p of op.parameters) if (isObj(p)) m.msg(8, parametersItem(p));
  if (isObj(op.responses)) {
    const rs = new Msg();
    for (const [code, r] of Object.entries(op.responses)) {
      if (!isObj(r)) continue;
      const resp = new Msg().str(1, r.description);
      if (isObj(r.schema)) resp.msg(2, new Msg().msg(1, schema(r.schema)));
      rs.msg(1, new Msg().str(1, code).msg(2, new Msg().msg(1, resp)));
    }
    m.msg(9, rs);
  }
  m.strs(10, op.schemes).bool(11, op.deprecated);
  return extensions(m, 13, op);
}

const METHOD_FIELDS: Record<string, number> = {
  get: 2, put: 3, post: 4, delete: 5, options: 6, head: 7, patch: 8 };

function pathItem(item: JsonObject): Msg {
  const m = new Msg();
  for (const [method, field] of Object.entries(METHOD_FIELDS)) {
    if (isObj(item[method])) m.msg(field, operation(item[method]));
  }
  if (Array.isArray(item.parameters)) for (const p of item.parameters) if (isObj(p)) m.msg(9, parametersItem(p));
  return extensions(m, 10, item);
}

/** The gnostic `openapi.v2.Document` bytes of a Swagger 2.0 document. */
export function encodeOpenApiV2(doc: JsonObject): Buffer {
  const info = isObj(doc.info) ? doc.info : {};
  const m = new Msg().str(1, doc.swagger).msg(2, new Msg().str(1, info.title).str(2, info.version));
  const paths = new Msg();
  for (const [p, item] of Object.entries(isObj(doc.paths) ? doc.paths : {})) {
    if (isObj(item)) paths.msg(2, new Msg().str(1, p).msg(2, pathItem(item)));
  }
  m.msg(8, paths);
  const defs = new Msg();
  for (const [n, s] of Object.entries(isObj(doc.definitions) ? doc.definitions : {})) {
    if (isObj(s)) defs.msg(1, new Msg().str(1, n).msg(2, schema(s)));
  }
  m.msg(9, defs);
  for (const req of Array.isArray(doc.security) ? doc.security : []) {
    if (!isObj(req)) continue;
    const r = new Msg();
    for (const [n, scopes] of Object.entries(req)) r.msg(1, new Msg().str(1, n).msg(2, new Msg().strs(1, scopes)));
    m.msg(12, r);
  }
  if (isObj(doc.securityDefinitions)) {
    const sd = new Msg();
    for (const [n, d] of Object.entries(doc.securityDefinitions)) {
      if (!isObj(d) || d.type !== 'apiKey') continue;
      const key = new Msg().str(1, d.type).str(2, d.name).str(3, d.in).str(4, d.description);
      sd.msg(1, new Msg().str(1, n).msg(2, new Msg().msg(2, key)));
    }
    m.msg(13, sd);
  }
  return m.done();
}
