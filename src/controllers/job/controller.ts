import type { ControllerContext } from '../options.js';
import type { Controller } from '../util.js';
export function buildJobController(_ctx: ControllerContext): Controller {
  return { name: 'job', start() {}, stop() {} };
}
