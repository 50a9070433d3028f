// StatefulSet defaulting and validation as upstream (apps/v1, v1.33), and the refusal of
// volumeClaimTemplates while kdp has no PersistentVolumeClaims.

import { describe, expect, it } from 'vitest';
import { applyDefaults } from '../../src/api/defaults.js';
import { validate } from '../../src/api/validation/index.js';
import type { StatefulSet } from '../../src/api/types.js';

const sts = (spec: Record<string, unknown> = {}): StatefulSet => applyDefaults({
  apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web', namespace: 'default' },
  spec: { serviceName: 'web', selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    ...spec },
} as StatefulSet);
const msgs = (o: StatefulSet, old?: StatefulSet) =>
  validate(o, old).map((c) => `${c.field}: ${c.message}`).join('\n');

describe('StatefulSet', () => {
  it('defaults as upstream SetDefaults_StatefulSet', () => {
    expect(sts().spec).toMatchObject({ replicas: 1, podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }, revisionHistoryLimit: 10,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' } });
    expect(sts({ updateStrategy: { type: 'OnDelete' } }).spec!.updateStrategy).toEqual({ type: 'OnDelete' });
    expect(sts().spec!.template.spec!.containers[0]!.imagePullPolicy).toBe('Always');
  });

  it('accepts a valid one', () => { expect(msgs(sts())).toBe(''); });

  it('reports upstream field paths and messages', () => {
    expect(msgs(sts({ podManagementPolicy: 'Random' }))).toContain("spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'");
    expect(msgs(sts({ updateStrategy: { type: 'OnDelete', rollingUpdate: { partition: 1 } } })))
      .toContain("spec.updateStrategy.rollingUpdate: Invalid value");
    expect(msgs(sts({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: -1 } } })))
      .toContain('spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0');
    expect(msgs(sts({ replicas: -1 }))).toContain('spec.replicas: Invalid value: -1');
    expect(msgs(sts({ selector: { matchLabels: { app: 'other' } } })))
      .toMatch(/spec\.template\.metadata\.labels: Invalid value: .*"app":"web".*: `selector` does not match template `labels`/);
    expect(msgs(sts({ selector: {} }))).toContain('empty selector is invalid for statefulset');
  });

  it('refuses volumeClaimTemplates with a clear cause', () => {
    expect(msgs(sts({ volumeClaimTemplates: [{ metadata: { name: 'data' } }] })))
      .toContain('spec.volumeClaimTemplates: Forbidden: kdp has no PersistentVolumeClaims');
  });

  it('allows updates to replicas, template, updateStrategy, minReadySeconds only', () => {
    const old = sts();
    expect(msgs(sts({ replicas: 5, minReadySeconds: 3 }), old)).toBe('');
    expect(msgs(sts({ serviceName: 'other' }), old)).toContain("spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden");
  });
});
