// Hostile HTTP framing, query parameters, selectors, watch options, names, namespaces, paths,
// methods and subresources over HTTPS: refused with upstream's status and Status body, nothing
// written.
import { hostileSuite } from './suite.js';
import { HTTP_LAYER_TABLE } from './tables/http-layer.js';
import { PATHS_TABLE } from './tables/paths.js';
import { QUERY_TABLE } from './tables/query.js';

hostileSuite('hostile request lines are refused before they reach anything', {
  'HTTP-layer refusals': HTTP_LAYER_TABLE,
  'query parameters, selectors and watches': QUERY_TABLE,
  'names, namespaces, paths, methods and subresources': PATHS_TABLE,
});
