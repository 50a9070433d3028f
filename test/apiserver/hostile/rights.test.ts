// Requests without the right to be made, and namespace deletes that must be refused, over HTTPS:
// refused with upstream's status and Status body before anything is decoded or removed.
import { hostileSuite } from './suite.js';
import { NAMESPACE_DELETE_TABLE } from './tables/namespace-delete.js';
import { RIGHTS_TABLE } from './tables/rights.js';

hostileSuite('nothing is done for a caller without the right, nor by a refused delete', {
  'unauthenticated and unauthorised requests': RIGHTS_TABLE,
  'refused namespace deletes': NAMESPACE_DELETE_TABLE,
});
