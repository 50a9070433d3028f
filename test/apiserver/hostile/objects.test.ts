// Requests that try to change what an object is, walk prototype paths, or write past a failed
// precondition or a dry run: refused (or harmless) with upstream's status and Status body, the
// store revision unmoved, Object.prototype untouched, and the object as it was.
import { hostileSuite } from './suite.js';
import { IDENTITY_TABLE } from './tables/identity.js';
import { PRECONDITIONS_TABLE } from './tables/preconditions.js';
import { PROTOTYPE_TABLE } from './tables/prototype.js';
import { SUBRESOURCES_TABLE } from './tables/subresources.js';

hostileSuite('objects keep what they are', {
  'identity changes': IDENTITY_TABLE,
  'prototype-pollution paths and keys': PROTOTYPE_TABLE,
  'preconditions, dry runs and options': PRECONDITIONS_TABLE,
  'status and scale subresources': SUBRESOURCES_TABLE,
});
