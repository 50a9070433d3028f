import { describe, expect, it } from 'vitest';
import type { Event } from '../../src/api/types.js';
import { agentLine, eventLine } from '../../src/logging/component-lines.js';

const ev = (source: Event['source'], reason: string): Event => ({
  apiVersion: 'v1', kind: 'Event', metadata: { name: 'x', namespace: 'default' },
  involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1', apiVersion: 'v1', fieldPath: 'spec.containers{web}' },
  reason, message: 'Started container "web"', type: 'Normal', source,
});

describe('component lines', () => {
  it('an Event is its recording component\'s "Event occurred" line, kubelet and kube-proxy per node', () => {
    expect(eventLine(ev({ component: 'kubelet', host: 'n1' }, 'Started'))).toEqual({
      component: 'kubelet', node: 'n1',
      message: '"Event occurred" object="default/web-1" fieldPath="spec.containers{web}" kind="Pod" ' +
        'apiVersion="v1" type="Normal" reason="Started" message="Started container \\"web\\""',
    });
    expect(eventLine(ev({ component: 'kube-proxy', host: 'n2' }, 'X'))).toMatchObject({ component: 'kube-proxy', node: 'n2' });
    expect(eventLine(ev({ component: 'default-scheduler' }, 'Scheduled'))).toMatchObject({ component: 'scheduler' });
    expect(eventLine(ev({ component: 'deployment-controller' }, 'ScalingReplicaSet')).component).toBe('controller-manager');
  });

  it('kube-proxy\'s warnings from kdp up\'s agents are kube-proxy lines of their node', () => {
    expect(agentLine('kube-proxy n3: IPv4 kernel rules back in sync')).toEqual({ component: 'kube-proxy', node: 'n3',
      message: 'IPv4 kernel rules back in sync' });
    expect(agentLine('routes: something')).toBeUndefined();
  });
});
