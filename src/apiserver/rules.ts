// Adapter from the api package (defaults, validation, selectors) to the service's ObjectRules.

import type { KubeObject } from '../client/types.js';
import type { Cause } from '../errors.js';
import { applyDefaults } from '../api/defaults.js';
import { parseFieldSelector } from '../api/field-selectors.js';
import { parseLabelSelector } from '../api/selectors.js';
import { validate } from '../api/validation/index.js';
import type { ObjectRules } from './rest/deps.js';
import type { ServedResource } from './resource-types.js';

/** Validates one object; returns every cause. */
export type Validator = (r: ServedResource, obj: KubeObject, old?: KubeObject,
  subresource?: string) => Cause[];

/** The api package's validation. */
export const defaultValidator: Validator = (_r, obj, old, subresource) =>
  validate(obj, old, subresource ? { subresource } : {});

export function buildObjectRules(validator: Validator = defaultValidator): ObjectRules {
  return {
    applyDefaults: (_r, obj, onCreate) => { applyDefaults(obj, { onCreate }); },
    validate: (r, obj, old, sub) => validator(r, obj, old, sub),
    compileLabelSelector: (s) => {
      const m = parseLabelSelector(s);
      return (labels) => m.matches(labels);
    },
    compileFieldSelector: (r, s) => {
      const m = parseFieldSelector(s, r.resource);
      return (o) => m.matches(o);
    },
  };
}
