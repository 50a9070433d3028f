// Random objects of any served kind, built from the kind's type table (src/api/schema): well
// typed by default, with nulls, unknown fields and, with probability `wrong` per value, a value
// of the wrong type. Seeded, so a failure reproduces.
import { TYPE_DEFS } from '../../src/api/schema/index.js';
import { seededRandom as rng } from './service-generator.js';

const STRINGS = ['', 'a', 'web', 'TCP', 'UDP', 'SCTP', 'IPv4', 'IPv6', '10.0.0.1', 'fd00::1',
  '10.0.0.0/24', 'Always', 'Never', 'ClientIP', 'None', 'NodePort', 'LoadBalancer',
  'ClusterIP', 'ExternalName', 'Local', 'Cluster', 'In', 'NotIn', 'Exists', 'Equal',
  'NoSchedule', 'RollingUpdate', 'Recreate', 'Indexed', 'x'.repeat(300), 'A B', '-', '1',
  'kubernetes', 'User', 'ServiceAccount', 'Role', 'ClusterRole', 'default', 'True', '*',
  'rbac.authorization.k8s.io', 'Opaque', 'kubernetes.io/tls', '50%', '/x', 'a.b/c', 'Ready'];
const INTS = [0, 1, -1, 2, 80, 65535, 65536, 2 ** 31 - 1, -(2 ** 31), 30, 10800];
const JUNK: unknown[] = [null, 'x', 7, 1.5, true, [], {}, [1, 'a'], { a: 1 }];

/** gen(typeExpr, depth, wrong) → a random value of that type. */
export function generator(seed: number) {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const gen = (expr: string, depth: number, wrong: number): unknown => {
    if (r() < wrong) return pick(JUNK);
    switch (expr) {
      case 'string': case 'time': return pick(STRINGS);
      case 'int32': case 'int64': return pick(INTS);
      case 'float64': return pick(INTS) / 2;
      case 'bool': return r() < 0.5;
      case 'byte': return pick(['', 'YQ==', 'aGVsbG8=']);
      case 'quantity': return pick(['1', '100m', '1Gi', 0, 2, '-1', '0.5']);
      case 'intstr': return pick([80, 'http', '', 0, -1, '50%', 'x'.repeat(20), 70000]);
      case 'any': return {};
    }
    if (expr.startsWith('[]')) {
      const n = depth > 8 ? 0 : Math.floor(r() * 4);
      return Array.from({ length: n }, () => (r() < 0.05 ? null :
        gen(expr.slice(2), depth + 1, wrong)));
    }
    if (expr.startsWith('map[string]')) {
      const out: Record<string, unknown> = {};
      const n = Math.floor(r() * 3);
      for (let i = 0; i < n; i++) out[pick(STRINGS)] = gen(expr.slice(11), depth + 1, wrong);
      return out;
    }
    const def = TYPE_DEFS[expr]!;
    if (typeof def === 'string') return gen(def, depth, wrong);
    const out: Record<string, unknown> = {};
    for (const [f, t] of Object.entries(def)) {
      if (f.startsWith('$') || r() < (depth > 6 ? 0.9 : 0.45)) continue;
      out[f] = r() < 0.03 ? null : gen(t, depth + 1, wrong);
    }
    if (r() < 0.1) out.unknownField = pick(JUNK);
    return out;
  };
  return gen;
}

