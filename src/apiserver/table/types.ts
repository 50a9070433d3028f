// metav1.Table shapes and the per-kind printer contract.

import type { KubeObject } from '../../client/types.js';

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export type Cell = string | number | boolean;

export interface Printer {
  readonly columns: readonly ColumnDefinition[];
  /** Cells in column order. */
  row(obj: KubeObject, now: Date): Cell[];
}

export function col(name: string, priority = 0, description = '', type = 'string', format = ''):
  ColumnDefinition {
  return { name, type, format, description, priority };
}

export const NAME_COL = col('Name', 0, 'Name must be unique within a namespace. Is required when ' +
  'creating resources, although some resources may allow a client to request the generation of ' +
  'an appropriate name automatically. Name is primarily intended for creation idempotence and ' +
  'configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/' +
  'overview/working-with-objects/names#names', 'string', 'name');

export const AGE_COL = col('Age', 0, 'CreationTimestamp is a timestamp representing the server ' +
  'time when this object was created.');

export const NONE = '<none>';

/** Reads a nested field without type noise: `get(o, 'spec', 'replicas')`. */
export function get(o: unknown, ...path: string[]): unknown {
  let cur = o;
  for (const p of path) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

export function arr<T = Record<string, unknown>>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

export function num(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

export function str(v: unknown, dflt = NONE): string {
  return typeof v === 'string' && v !== '' ? v : dflt;
}
