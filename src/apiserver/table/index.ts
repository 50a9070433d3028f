// Server-side printing: a metav1.Table for `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`
// with the columns kubectl shows for each kind. Rows carry `object` per `includeObject`:
// PartialObjectMetadata (default), the full object, or nothing.

import type { KubeObject } from '../../client/types.js';
import type { ServedResource } from '../resource-types.js';
import { age } from './duration.js';
import * as core from './core-printers.js';
import * as other from './other-printers.js';
import {
  controllerRevisionPrinter, cronJobPrinter, podDisruptionBudgetPrinter, statefulSetPrinter,
} from './workload-printers.js';
import type { Cell, ColumnDefinition, Printer } from './types.js';
import { networkPolicyPrinter } from '../../netpol/printer.js';
import { AGE_COL, NAME_COL } from './types.js';
import { componentStatusPrinter } from '../rest/component-status.js';
import { apiServicePrinter } from '../../metrics/api-services.js';

const DEFAULT_PRINTER: Printer = {
  columns: [NAME_COL, AGE_COL],
  row: (o, now) => [o.metadata.name ?? '', age(o.metadata.creationTimestamp, now)],
};

const PRINTERS: Record<string, Printer> = {
  'pods': core.podPrinter,
  'services': core.servicePrinter,
  'nodes': core.nodePrinter,
  'namespaces': core.namespacePrinter,
  'endpoints': core.endpointsPrinter,
  'configmaps': core.configMapPrinter,
  'secrets': core.secretPrinter,
  'serviceaccounts': core.serviceAccountPrinter,
  'componentstatuses': componentStatusPrinter,
  'apiregistration.k8s.io/apiservices': apiServicePrinter,
  'events': core.eventPrinter,
  'apps/deployments': other.deploymentPrinter,
  'apps/replicasets': other.replicaSetPrinter,
  'apps/daemonsets': other.daemonSetPrinter,
  'batch/jobs': other.jobPrinter,
  'apps/statefulsets': statefulSetPrinter,
  'batch/cronjobs': cronJobPrinter,
  'policy/poddisruptionbudgets': podDisruptionBudgetPrinter,
  'apps/controllerrevisions': controllerRevisionPrinter,
  'discovery.k8s.io/endpointslices': other.endpointSlicePrinter,
  'coordination.k8s.io/leases': other.leasePrinter,
  'certificates.k8s.io/certificatesigningrequests': other.csrPrinter,
  'networking.k8s.io/servicecidrs': other.serviceCidrPrinter,
  'networking.k8s.io/networkpolicies': networkPolicyPrinter,
  'rbac.authorization.k8s.io/roles': other.rolePrinter,
  'rbac.authorization.k8s.io/clusterroles': other.rolePrinter,
  'rbac.authorization.k8s.io/rolebindings': other.bindingPrinter,
  'rbac.authorization.k8s.io/clusterrolebindings': other.bindingPrinter,
};

export function printerFor(r: ServedResource): Printer {
  return PRINTERS[r.group ? `${r.group}/${r.resource}` : r.resource] ?? DEFAULT_PRINTER;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableRow {
  cells: Cell[];
  object?: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  columnDefinitions: ColumnDefinition[] | null;
  rows: TableRow[];
}

function rowObject(o: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return o;
  const { managedFields: _mf, ...metadata } = o.metadata;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata };
}

export function toTable(
  r: ServedResource, objs: readonly KubeObject[], meta: Table['metadata'],
  include: IncludeObject, now: Date, withColumns = true,
): Table {
  const p = printerFor(r);
  const rows = objs.map((o) => {
    const row: TableRow = { cells: p.row(o, now) };
    const obj = rowObject(o, include);
    if (obj !== undefined) row.object = obj;
    return row;
  });
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: meta,
    columnDefinitions: withColumns ? [...p.columns] : null, rows };
}
