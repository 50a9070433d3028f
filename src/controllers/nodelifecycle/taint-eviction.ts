import type { ControllerContext } from '../options.js';
import type { Controller } from '../util.js';
export function buildTaintEvictionController(_ctx: ControllerContext): Controller {
  return { name: 'taint-eviction', start() {}, stop() {} };
}
