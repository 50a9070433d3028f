// An in-memory nftables, like knftables' Fake: applies a transaction atomically (all or
// nothing, failing where the kernel would fail) and dumps its state as `add` lines, the form
// upstream's tests and kdp's goldens compare.

import { kdpError } from '../../errors.js';
import {
  cloneRuleset,
  elementKey,
  newTable,
  tableKey,
  type NftChain,
  type NftRuleset,
  type NftSet,
  type NftTable,
} from './model.js';
import { formatOperation, type NftChainSpec, type NftOp, type NftSetSpec } from './transaction.js';

function applyError(op: NftOp, index: number, reason: string): Error {
  return kdpError('KDP_HOST_EXEC',
    `nft: operation ${index + 1} failed: ${reason}: ${formatOperation(op)}`);
}

/** Apply `ops` to a copy of `rs` and return it; on any error `rs` is untouched and this throws. */
export function applyTransaction(rs: NftRuleset, ops: readonly NftOp[]): NftRuleset {
  const next = cloneRuleset(rs);
  ops.forEach((op, i) => applyOne(next, op, (reason) => {
    throw applyError(op, i, reason);
  }));
  return next;
}

type Fail = (reason: string) => never;

function getTable(rs: NftRuleset, op: NftOp, fail: Fail): NftTable {
  return rs.tables.get(tableKey(op.family, op.table)) ?? fail('No such file or directory (table)');
}

function applyOne(rs: NftRuleset, op: NftOp, fail: Fail): void {
  if (op.object === 'table') return applyTable(rs, op, fail);
  const t = getTable(rs, op, fail);
  switch (op.object) {
    case 'chain':
      return applyChain(t, op.verb, op.chain, fail);
    case 'rule': {
      const c = t.chains.get(op.chain) ?? fail(`No such file or directory (chain ${op.chain})`);
      if (op.verb !== 'add' || !op.rule) fail(`rule ${op.verb} is not supported by the fake`);
      c.rules.push(op.rule);
      return;
    }
    case 'set':
    case 'map':
      return applySet(t, op.object, op.verb, op.set, fail);
    case 'element':
      return applyElements(t, op, fail);
  }
}

function applyTable(rs: NftRuleset, op: Extract<NftOp, { object: 'table' }>, fail: Fail): void {
  const k = tableKey(op.family, op.table);
  const t = rs.tables.get(k);
  if (op.verb === 'add' || op.verb === 'create') {
    if (t && op.verb === 'create') fail('File exists (table)');
    const table = t ?? newTable(op.family, op.table);
    if (op.comment !== undefined) table.comment = op.comment;
    if (op.flags) table.flags = op.flags;
    rs.tables.set(k, table);
  } else if (op.verb === 'flush') {
    if (!t) fail('No such file or directory (table)');
    for (const c of t.chains.values()) c.rules.length = 0;
    for (const s of t.sets.values()) s.elements.clear();
  } else if (op.verb === 'delete' || op.verb === 'destroy') {
    if (!t && op.verb === 'delete') fail('No such file or directory (table)');
    rs.tables.delete(k);
  } else fail(`table ${op.verb} is not supported`);
}

function applyChain(
  t: NftTable,
  verb: string,
  spec: NftChainSpec,
  fail: Fail,
): void {
  const c = t.chains.get(spec.name);
  if (verb === 'add' || verb === 'create') {
    if (c && verb === 'create') fail(`File exists (chain ${spec.name})`);
    if (c && spec.type !== undefined && (c.type !== spec.type || c.hook !== spec.hook
        || c.priority !== spec.priority)) {
      fail(`Device or resource busy (chain ${spec.name} exists with other hook properties)`);
    }
    if (!c) t.chains.set(spec.name, { ...spec, rules: [] } as NftChain);
  } else if (verb === 'flush') {
    if (!c) fail(`No such file or directory (chain ${spec.name})`);
    c.rules.length = 0;
  } else if (verb === 'delete' || verb === 'destroy') {
    if (!c) {
      if (verb === 'delete') fail(`No such file or directory (chain ${spec.name})`);
      return;
    }
    if (c.rules.length > 0) fail(`Device or resource busy (chain ${spec.name} is not empty)`);
    if (isReferenced(t, spec.name)) fail(`Device or resource busy (chain ${spec.name} in use)`);
    t.chains.delete(spec.name);
  } else fail(`chain ${verb} is not supported`);
}

/** True when a rule or a map element still jumps/goes to `chain`. */
function isReferenced(t: NftTable, chain: string): boolean {
  for (const c of t.chains.values()) {
    for (const r of c.rules) {
      for (let i = 0; i < r.tokens.length - 1; i++) {
        const w = r.tokens[i];
        if ((w === 'jump' || w === 'goto') && r.tokens[i + 1] === chain) return true;
      }
    }
  }
  for (const s of t.sets.values()) {
    for (const e of s.elements.values()) {
      if (e.value && e.value[0]?.endsWith(` ${chain}`)) return true;
    }
  }
  return false;
}

function applySet(
  t: NftTable,
  kind: 'set' | 'map',
  verb: string,
  spec: NftSetSpec,
  fail: Fail,
): void {
  const s = t.sets.get(spec.name);
  if (verb === 'add' || verb === 'create') {
    if (s && verb === 'create') fail(`File exists (${kind} ${spec.name})`);
    if (s) return;
    const set: NftSet = {
      kind,
      name: spec.name,
      type: spec.type ?? '',
      flags: spec.flags ?? [],
      elements: new Map(),
      ...pick(spec),
    };
    t.sets.set(spec.name, set);
  } else if (verb === 'flush') {
    if (!s) fail(`No such file or directory (${kind} ${spec.name})`);
    s.elements.clear();
  } else if (verb === 'delete' || verb === 'destroy') {
    if (!s && verb === 'delete') fail(`No such file or directory (${kind} ${spec.name})`);
    t.sets.delete(spec.name);
  } else fail(`${kind} ${verb} is not supported`);
}

function pick(spec: NftSetSpec): Partial<NftSet> {
  const out: { -readonly [K in keyof NftSet]?: NftSet[K] } = {};
  if (spec.typeof !== undefined) out.typeof = spec.typeof;
  if (spec.timeout !== undefined) out.timeout = spec.timeout;
  if (spec.gcInterval !== undefined) out.gcInterval = spec.gcInterval;
  if (spec.size !== undefined) out.size = spec.size;
  if (spec.policy !== undefined) out.policy = spec.policy;
  if (spec.autoMerge !== undefined) out.autoMerge = spec.autoMerge;
  if (spec.comment !== undefined) out.comment = spec.comment;
  return out;
}

function applyElements(t: NftTable, op: Extract<NftOp, { object: 'element' }>, fail: Fail): void {
  const s = t.sets.get(op.set) ?? fail(`No such file or directory (set ${op.set})`);
  for (const e of op.elements) {
    const k = elementKey(e.key);
    if (op.verb === 'add' || op.verb === 'create') {
      if (s.elements.has(k) && op.verb === 'create') fail(`File exists (element ${k})`);
      if (s.kind === 'map' && !e.value) fail(`map ${op.set} element ${k} without value`);
      if (!s.elements.has(k)) s.elements.set(k, e);
    } else if (op.verb === 'delete' || op.verb === 'destroy') {
      if (!s.elements.has(k) && op.verb === 'delete') {
        fail(`No such file or directory (element ${k})`);
      }
      s.elements.delete(k);
    } else fail(`element ${op.verb} is not supported`);
  }
}

/** The state as `add` operations: tables, chains, sets/maps, rules, elements. */
export function dumpOps(rs: NftRuleset): NftOp[] {
  const ops: NftOp[] = [];
  for (const t of rs.tables.values()) {
    const base = { verb: 'add' as const, family: t.family, table: t.name };
    ops.push({ ...base, object: 'table', ...tableProps(t) });
    for (const c of t.chains.values()) {
      const { rules: _rules, ...spec } = c;
      ops.push({ ...base, object: 'chain', chain: spec });
    }
    for (const s of t.sets.values()) {
      const { elements: _e, kind, ...spec } = s;
      ops.push({ ...base, object: kind, set: { ...spec, flags: spec.flags } });
    }
    for (const c of t.chains.values()) {
      for (const rule of c.rules) ops.push({ ...base, object: 'rule', chain: c.name, rule });
    }
    for (const s of t.sets.values()) {
      for (const e of s.elements.values()) {
        ops.push({ ...base, object: 'element', set: s.name, elements: [e] });
      }
    }
  }
  return ops;
}

function tableProps(t: NftTable): { comment?: string; flags?: readonly string[] } {
  const out: { comment?: string; flags?: readonly string[] } = {};
  if (t.comment !== undefined) out.comment = t.comment;
  if (t.flags?.length) out.flags = t.flags;
  return out;
}
