import type { ControllerContext } from '../options.js';
import type { Controller } from '../util.js';
export function buildGarbageCollector(_ctx: ControllerContext): Controller {
  return { name: 'gc', start() {}, stop() {} };
}
