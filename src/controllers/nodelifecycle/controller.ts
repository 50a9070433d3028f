import type { ControllerContext } from '../options.js';
import type { Controller } from '../util.js';
export function buildNodeLifecycleController(_ctx: ControllerContext): Controller {
  return { name: 'nodelifecycle', start() {}, stop() {} };
}
