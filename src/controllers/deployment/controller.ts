import type { ControllerContext } from '../options.js';
import type { Controller } from '../util.js';
export function buildDeploymentController(_ctx: ControllerContext): Controller {
  return { name: 'deployment', start() {}, stop() {} };
}
