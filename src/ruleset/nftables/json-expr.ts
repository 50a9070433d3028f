// `nft -j` rule expressions (libnftables JSON schema) rendered to rule words as `nft list`
// prints them. Covers the statements kube-proxy and common firewall rules use; anything else
// is reported by the caller as a parse error naming the rule.

type J = unknown;
type Obj = Record<string, J>;

export class UnsupportedExpr extends Error {}

const isObj = (v: J): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Meta keys nft prints without the `meta` prefix. */
const BARE_META = new Set(['iif', 'iifname', 'iiftype', 'oif', 'oifname', 'oiftype', 'skuid',
  'skgid', 'nftrace', 'rtclassid', 'ibriport', 'obriport', 'ibrname', 'obrname', 'pkttype',
  'cpu', 'iifgroup', 'oifgroup', 'cgroup']);

function one(o: Obj): [string, J] {
  const keys = Object.keys(o);
  if (keys.length !== 1) throw new UnsupportedExpr(`expected one key, got ${keys.join(',')}`);
  return [keys[0]!, o[keys[0]!]];
}

function hex8(n: number): string {
  return '0x' + n.toString(16).padStart(8, '0');
}

/** Render a value; `markCtx` prints numbers as 8-digit hex (meta mark / ct mark operands). */
export function renderExpr(e: J, markCtx = false): string {
  if (typeof e === 'string') return e;
  if (typeof e === 'number') return markCtx ? hex8(e) : String(e);
  if (typeof e === 'boolean') return String(e);
  if (Array.isArray(e)) return e.map((x) => renderExpr(x, markCtx)).join(', ');
  if (!isObj(e)) throw new UnsupportedExpr(`value ${JSON.stringify(e)}`);
  const [k, v] = one(e);
  const o = (isObj(v) ? v : {}) as Obj;
  switch (k) {
    case 'payload': return `${o.protocol} ${o.field}`;
    case 'meta': return BARE_META.has(String(o.key)) ? String(o.key) : `meta ${o.key}`;
    case 'ct': return `ct ${o.key}`;
    case 'fib': return `fib ${(o.flags as string[]).join(' . ')} ${o.result}`;
    case 'prefix': return `${renderExpr(o.addr)}/${o.len}`;
    case 'range': return (v as J[]).map((x) => renderExpr(x)).join('-');
    case 'concat': return (v as J[]).map((x) => renderExpr(x, markCtx)).join(' . ');
    case 'set': {
      const items = Array.isArray(v) ? v : [v];
      return `{ ${items.map((x) => renderSetItem(x)).join(', ')} }`;
    }
    case 'numgen': {
      const off = o.offset && o.offset !== 0 ? ` offset ${o.offset}` : '';
      return `numgen ${o.mode} mod ${o.mod}${off}`;
    }
    case '&': case '|': case '^': {
      const [l, r] = v as J[];
      const mark = isMark(l);
      return `${renderExpr(l)} ${k} ${renderExpr(r, mark)}`;
    }
    case 'elem': return renderElem(o);
    default: {
      const verdict = renderVerdict(e);
      if (verdict !== undefined) return verdict;
      throw new UnsupportedExpr(`expression "${k}"`);
    }
  }
}

function isMark(e: J): boolean {
  if (!isObj(e)) return false;
  const m = e.meta ?? e.ct;
  if (isObj(m) && m.key === 'mark') return true;
  const and = e['&'];
  return Array.isArray(and) && isMark(and[0]);
}

function renderElem(o: Obj): string {
  let s = renderExpr(o.val);
  if (o.timeout !== undefined) s += ` timeout ${o.timeout}s`;
  if (o.expires !== undefined) s += ` expires ${o.expires}s`;
  if (o.comment !== undefined) s += ` comment "${o.comment}"`;
  return s;
}

function renderSetItem(x: J): string {
  if (Array.isArray(x) && x.length === 2) return `${renderExpr(x[0])} : ${renderExpr(x[1])}`;
  return renderExpr(x);
}

/** `{"jump": {"target": "x"}}` → `jump x`; `{"drop": null}` → `drop`. */
export function renderVerdict(e: J): string | undefined {
  if (!isObj(e)) return undefined;
  const [k, v] = one(e);
  if (k === 'jump' || k === 'goto') return `${k} ${(v as Obj).target}`;
  if (['accept', 'drop', 'continue', 'return', 'queue'].includes(k) && (v === null || isObj(v))) {
    return k;
  }
  return undefined;
}

function renderMatch(o: Obj): string[] {
  const left = renderExpr(o.left);
  const mark = isMark(o.left);
  const right = renderExpr(o.right, mark);
  const op = String(o.op);
  const binop = isObj(o.left) && ['&', '|', '^'].some((b) => b in (o.left as Obj));
  if ((op === '==' && !binop) || op === 'in') return [left, right];
  return [left, op, right];
}

function renderDnat(kind: string, o: Obj): string {
  const fam = o.family ? ` ${o.family}` : '';
  let target = o.addr === undefined ? '' : renderExpr(o.addr);
  if (o.port !== undefined) {
    target = target.includes(':') && !target.startsWith('[') ? `[${target}]` : target;
    target += `:${renderExpr(o.port)}`;
  }
  let s = `${kind}${fam} to ${target}`;
  if (o.flags) s += ` ${(Array.isArray(o.flags) ? o.flags : [o.flags]).join(',')}`;
  return s;
}

/** Render one statement of a rule's `expr` array. */
export function renderStatement(st: J): string {
  if (!isObj(st)) throw new UnsupportedExpr(`statement ${JSON.stringify(st)}`);
  const [k, v] = one(st);
  const o = (isObj(v) ? v : {}) as Obj;
  switch (k) {
    case 'match': return renderMatch(o).join(' ');
    case 'vmap': return `${renderExpr(o.key)} vmap ${renderExpr(o.data)}`;
    case 'map': return `${renderExpr(o.key)} map ${renderExpr(o.data)}`;
    case 'mangle': {
      const key = renderExpr(o.key);
      return `${key} set ${renderExpr(o.value, isMark(o.key))}`;
    }
    case 'counter':
      return v === null || !isObj(v) ? 'counter' : `counter packets ${o.packets} bytes ${o.bytes}`;
    case 'dnat': case 'snat': return renderDnat(k, o);
    case 'masquerade': {
      const f = o.flags;
      return f ? `masquerade ${(Array.isArray(f) ? f : [f]).join(',')}` : 'masquerade';
    }
    case 'reject': {
      const def = o.expr === undefined || o.expr === 'port-unreachable';
      return def && (o.type === undefined || ['icmp', 'icmpv6', 'icmpx'].includes(String(o.type)))
        ? 'reject' : `reject with ${o.type} ${o.expr}`;
    }
    case 'set': return `${o.op} ${o.set} { ${renderExpr(o.elem)} }`;
    case 'notrack': return 'notrack';
    default: {
      const verdict = renderVerdict(st);
      if (verdict !== undefined) return verdict;
      throw new UnsupportedExpr(`statement "${k}"`);
    }
  }
}
