import type { ControllerContext } from '../options.js';
import type { Controller } from '../util.js';
export function buildNamespaceController(_ctx: ControllerContext): Controller {
  return { name: 'namespace', start() {}, stop() {} };
}
