import { describe, expect, it } from 'vitest';
import { applyDefaults } from '../../src/api/defaults.js';
import { validate } from '../../src/api/validation/index.js';
import type { DaemonSet, Deployment, Job, PodTemplateSpec } from '../../src/api/types.js';

const template = (labels: Record<string, string>, restartPolicy?: 'Never'): PodTemplateSpec => ({
  metadata: { labels },
  spec: { containers: [{ name: 'c', image: 'i:1' }], ...(restartPolicy ? { restartPolicy } : {}) },
});

function deploy(spec: Partial<NonNullable<Deployment['spec']>>): Deployment {
  return applyDefaults({ apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: 'd', namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'a' } }, template: template({ app: 'a' }), ...spec },
  } as Deployment);
}

const fields = (o: Deployment | DaemonSet | Job): string[] =>
  validate(o).map((c) => `${c.field} ${c.reason}`);

describe('workload validation', () => {
  it('accepts a matching deployment', () => {
    expect(validate(deploy({}))).toEqual([]);
  });
  it('rejects a selector that does not match the template labels, as upstream words it', () => {
    const c = validate(deploy({ template: template({ app: 'b' }) }));
    expect(c).toEqual([{ field: 'spec.template.metadata.labels', reason: 'FieldValueInvalid',
      message: 'Invalid value: map[string]string{"app":"b"}: `selector` does not match template '
        + '`labels`' }]);
  });
  it('requires a non-empty selector', () => {
    expect(fields(deploy({ selector: {} }))).toEqual(['spec.selector FieldValueInvalid']);
    expect(fields(deploy({ selector: undefined as never })))
      .toEqual(['spec.selector FieldValueRequired']);
  });
  it('reports strategy, counts and template problems together', () => {
    expect(fields(deploy({ replicas: -1, strategy: { type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 0, maxSurge: '0%' } }, minReadySeconds: 700,
    template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c' }],
      restartPolicy: 'Never' } } }))).toEqual([
      'spec.replicas FieldValueInvalid',
      'spec.template.spec.containers[0].image FieldValueRequired',
      'spec.template.spec.restartPolicy FieldValueNotSupported',
      'spec.strategy.rollingUpdate.maxUnavailable FieldValueInvalid',
      'spec.progressDeadlineSeconds FieldValueInvalid',
    ]);
    expect(fields(deploy({ strategy: { type: 'RollingUpdate',
      rollingUpdate: { maxSurge: '150%', maxUnavailable: 'x' } } }))).toEqual([
      'spec.strategy.rollingUpdate.maxUnavailable FieldValueInvalid',
      'spec.strategy.rollingUpdate.maxSurge FieldValueInvalid',
    ]);
  });
  it('checks DaemonSet selector emptiness and update strategy', () => {
    const ds = applyDefaults({ apiVersion: 'apps/v1', kind: 'DaemonSet',
      metadata: { name: 'ds', namespace: 'kube-system' },
      spec: { selector: {}, template: template({ k: 'v' }),
        updateStrategy: { type: 'Sideways' as 'OnDelete' } } } as DaemonSet);
    expect(fields(ds)).toEqual(['spec.selector FieldValueInvalid',
      'spec.updateStrategy.type FieldValueNotSupported']);
  });
  it('requires Jobs to restart OnFailure or Never and to have a selector', () => {
    const job = applyDefaults({ apiVersion: 'batch/v1', kind: 'Job',
      metadata: { name: 'j', namespace: 'default' }, spec: { template: template({}) } } as Job);
    expect(validate(job).map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec.selector: Required value',
      'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: '
        + '"OnFailure", "Never"',
    ]);
  });
});

describe('job selector generation', () => {
  it('generates the selector of a Job created with a uid, as upstream does', () => {
    const job = applyDefaults({ apiVersion: 'batch/v1', kind: 'Job',
      metadata: { name: 'j', namespace: 'default', uid: 'u-1' },
      spec: { template: template({}, 'Never') } } as Job);
    expect(validate(job)).toEqual([]);
    expect(job.spec!.selector).toEqual(
      { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u-1' } });
    expect(job.spec!.template.metadata!.labels!['job-name']).toBe('j');
  });
});
