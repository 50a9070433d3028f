import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/api/types.js';
import { runFilters } from '../../src/scheduler/filters.js';
import { fitErrorMessage } from '../../src/scheduler/messages.js';
import { addPodToNode, buildNodeInfo, podHostPorts, podResources } from '../../src/scheduler/node-info.js';
import { numFeasibleNodesToFind, scoreNode } from '../../src/scheduler/scores.js';
import { toleratesTaint } from '../../src/api/node-affinity.js';

const node = (name: string, extra: Partial<Node> = {}): Node => ({
  metadata: { name, labels: { 'kubernetes.io/hostname': name } },
  status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } }, ...extra,
});
const facts = (pod: Pod) => ({ pod, res: podResources(pod), ports: podHostPorts(pod) });
const pod = (spec: Partial<NonNullable<Pod['spec']>> = {}): Pod =>
  ({ metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c' }], ...spec } });

describe('scheduler filters', () => {
  it('rejects an unschedulable (cordoned) node unless the pod tolerates it', () => {
    const info = buildNodeInfo(node('a', { spec: { unschedulable: true } }));
    expect(runFilters(facts(pod()), info)?.reasons).toEqual(['node(s) were unschedulable']);
    const tol = pod({ tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists' }] });
    expect(runFilters(facts(tol), info)).toBeUndefined();
  });

  it('matches tolerations as upstream ToleratesTaint', () => {
    const t = { key: 'k', value: 'v', effect: 'NoSchedule' as const };
    expect(toleratesTaint({ operator: 'Exists' }, t)).toBe(true);
    expect(toleratesTaint({ key: 'k', operator: 'Equal', value: 'v' }, t)).toBe(true);
    expect(toleratesTaint({ key: 'k', operator: 'Equal', value: 'w' }, t)).toBe(false);
    expect(toleratesTaint({ key: 'k', operator: 'Exists', effect: 'NoExecute' }, t)).toBe(false);
  });

  it('ignores PreferNoSchedule taints when filtering', () => {
    const info = buildNodeInfo(node('a', { spec: { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] } }));
    expect(runFilters(facts(pod()), info)).toBeUndefined();
  });

  it('counts requests of pods already on the node and reports every missing resource', () => {
    const info = buildNodeInfo(node('a'));
    const big = pod({ containers: [{ name: 'c', resources: { requests: { cpu: '3', memory: '6Gi' } } }] });
    addPodToNode(info, 'default/x', big);
    expect(runFilters(facts(big), info)?.reasons).toEqual(['Insufficient cpu', 'Insufficient memory']);
  });

  it('refuses a host port already used on the node', () => {
    const info = buildNodeInfo(node('a'));
    const hp = pod({ containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort: 8080 }] }] });
    addPodToNode(info, 'default/x', hp);
    expect(runFilters(facts(hp), info)?.reasons)
      .toEqual(["node(s) didn't have free ports for the requested pod ports"]);
  });

  it('matches node affinity Gt/NotIn/DoesNotExist and matchFields metadata.name', () => {
    const info = buildNodeInfo(node('a', { metadata: { name: 'a', labels: { gen: '5' } } }));
    const aff = (terms: object[]) => pod({ affinity: { nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms as never } } } });
    expect(runFilters(facts(aff([{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['4'] }] }])), info)).toBeUndefined();
    expect(runFilters(facts(aff([{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['5'] }] }])), info)).toBeDefined();
    expect(runFilters(facts(aff([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] }])), info)).toBeUndefined();
    expect(runFilters(facts(aff([{ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }])), info)).toBeUndefined();
    expect(runFilters(facts(aff([{}])), info)).toBeDefined();
  });
});

describe('scheduler scoring and messages', () => {
  it('prefers the emptier node (least allocated + balanced)', () => {
    const empty = buildNodeInfo(node('a'));
    const busy = buildNodeInfo(node('b'));
    addPodToNode(busy, 'default/x', pod({ containers: [{ name: 'c', resources: { requests: { cpu: '2', memory: '1Gi' } } }] }));
    const p = podResources(pod());
    expect(scoreNode(p, empty)).toBeGreaterThan(scoreNode(p, busy));
  });

  it('looks for an adaptive share of nodes as upstream (all below 100, 42% of 1000, min 100)', () => {
    expect(numFeasibleNodesToFind(50)).toBe(50);
    expect(numFeasibleNodesToFind(1000)).toBe(420);
    expect(numFeasibleNodesToFind(150)).toBe(100);
    expect(numFeasibleNodesToFind(5000, 10)).toBe(500);
  });

  it('renders the FitError histogram sorted as strings', () => {
    expect(fitErrorMessage(3, [
      { reasons: ["node(s) didn't match Pod's node affinity/selector"], unresolvable: true },
      { reasons: ['Insufficient cpu'], unresolvable: false },
      { reasons: ["node(s) didn't match Pod's node affinity/selector"], unresolvable: true },
    ])).toBe("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node " +
      'affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims found ' +
      'for incoming pod, 2 Preemption is not helpful for scheduling.');
  });
});
