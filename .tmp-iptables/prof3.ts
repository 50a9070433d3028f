import type { EndpointSlice } from '../src/api/types.js';
import { compileConfigs, feedObjects } from '../src/proxy/compile.js';
import * as ipt from '../src/proxy/iptables/proxier.js';
import { ProxyPipeline } from '../src/proxy/pipeline.js';
import { generateServices } from '../test/helpers/service-generator.js';
const objects = generateServices(10000, { seed: 42 });
const [config] = compileConfigs({ objects: [], mode: 'iptables', nodeName: 'node-0', nodeIPs: ['172.18.0.2'], configText: 'clusterCIDR: 10.244.0.0/16\n' });
const proxier = ipt.buildProxier(config!);
const p = new ProxyPipeline(proxier);
feedObjects(p, objects);
p.sync(); p.commit(true);
const slice = objects[2 * 777 + 1] as EndpointSlice;
const t0 = performance.now();
for (let k = 0; k < 20; k++) {
  p.onEndpointSlice({ ...slice, endpoints: slice.endpoints.slice(0, 9 - (k % 2)) });
  const r = p.sync(); p.commit(true);
}
console.log('avg partial', (performance.now() - t0) / 20);
