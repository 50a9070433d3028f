// Printers of StatefulSet and CronJob, as upstream's pkg/printers/internalversion
// (printStatefulSet, printCronJob): the columns `kubectl get sts,cronjob [-o wide]` shows.

import type { KubeObject } from '../../client/types.js';
import { formatLabelSelector } from '../../api/selectors.js';
import type { LabelSelector } from '../../api/types.js';
import { age } from './duration.js';
import type { Printer } from './types.js';
import { AGE_COL, NAME_COL, NONE, arr, col, get, num } from './types.js';

const CONTAINERS = col('Containers', 1, 'Names of each container in the template.');
const IMAGES = col('Images', 1, 'Images referenced by each container in the template.');

function containers(spec: unknown): [string, string] {
  const cs = arr(get(spec, 'containers'));
  return [cs.map((c) => String(c.name)).join(','), cs.map((c) => String(c.image)).join(',')];
}

export const statefulSetPrinter: Printer = {
  columns: [NAME_COL, col('Ready', 0, 'Number of the pod with ready state'), AGE_COL, CONTAINERS,
    IMAGES],
  row: (s, now) => [s.metadata.name ?? '',
    `${num(get(s, 'status', 'readyReplicas'))}/${num(get(s, 'spec', 'replicas'))}`,
    age(s.metadata.creationTimestamp, now), ...containers(get(s, 'spec', 'template', 'spec'))],
};

function boolPtr(v: unknown): string {
  return v === undefined || v === null ? '<unset>' : v ? 'True' : 'False';
}

/** NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE (`N/A` for the unset one). */
export const podDisruptionBudgetPrinter: Printer = {
  columns: [NAME_COL, col('Min Available', 0, 'The minimum number of pods that must be available'),
    col('Max Unavailable', 0, 'The maximum number of pods that may be unavailable'),
    col('Allowed Disruptions', 0, 'Calculated number of pods that may be disrupted at this time', 'integer'), AGE_COL],
  row: (p, now) => {
    const spec = (p.spec ?? {}) as { minAvailable?: unknown; maxUnavailable?: unknown };
    return [p.metadata.name ?? '', spec.minAvailable === undefined ? 'N/A' : String(spec.minAvailable),
      spec.maxUnavailable === undefined ? 'N/A' : String(spec.maxUnavailable),
      num(get(p, 'status', 'disruptionsAllowed')), age(p.metadata.creationTimestamp, now)];
  },
};

export const cronJobPrinter: Printer = {
  columns: [NAME_COL,
    col('Schedule', 0, 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.'),
    col('Timezone', 0, 'The time zone name for the given schedule, see ' +
      'https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.'),
    col('Suspend', 0, 'This flag tells the controller to suspend subsequent executions, it does ' +
      'not apply to already started executions.  Defaults to false.', 'boolean'),
    col('Active', 0, 'A list of pointers to currently running jobs.', 'integer'),
    col('Last Schedule', 0, 'Information when was the last time the job was successfully ' +
      'scheduled.', 'date'),
    AGE_COL, CONTAINERS, IMAGES,
    col('Selector', 1, 'A label query over pods that should match the pod count. Normally, the ' +
      'system sets this field for you.')],
  row: (c: KubeObject, now) => {
    const last = get(c, 'status', 'lastScheduleTime') as string | undefined;
    const sel = get(c, 'spec', 'jobTemplate', 'spec', 'selector') as LabelSelector | undefined;
    return [c.metadata.name ?? '', String(get(c, 'spec', 'schedule') ?? ''),
      String(get(c, 'spec', 'timeZone') ?? NONE), boolPtr(get(c, 'spec', 'suspend')),
      arr(get(c, 'status', 'active')).length, last ? age(last, now) : NONE,
      age(c.metadata.creationTimestamp, now),
      ...containers(get(c, 'spec', 'jobTemplate', 'spec', 'template', 'spec')),
      sel ? formatLabelSelector(sel) || NONE : NONE];
  },
};

export const controllerRevisionPrinter: Printer = {
  columns: [NAME_COL, col('Controller', 0, 'Controller of the object'),
    col('Revision', 0, 'Revision indicates the revision of the state represented by Data.', 'integer'),
    AGE_COL],
  row: (r, now) => {
    const ref = (r.metadata.ownerReferences ?? []).find((o) => o.controller);
    const group = ref?.apiVersion?.includes('/') ? `.${ref.apiVersion.split('/')[0]}` : '';
    return [r.metadata.name ?? '', ref ? `${ref.kind.toLowerCase()}${group}/${ref.name}` : NONE,
      num(r.revision), age(r.metadata.creationTimestamp, now)];
  },
};
