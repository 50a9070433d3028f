// Hostile bodies, content types and Accept headers over HTTPS: refused with upstream's status and
// Status body, the store revision unmoved, and the objects they aimed at as they were.
import { hostileSuite } from './suite.js';
import { BODIES_TABLE } from './tables/bodies.js';
import { MEDIA_TABLE } from './tables/media.js';

hostileSuite('hostile bodies and media types write nothing', {
  'deep nesting, sizes, syntax and strategic-merge directives': BODIES_TABLE,
  'content types and accepts': MEDIA_TABLE,
});
