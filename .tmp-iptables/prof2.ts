import { compileConfigs, feedObjects } from '../src/proxy/compile.js';
import * as ipt from '../src/proxy/iptables/proxier.js';
import { hash16 } from '../src/proxy/iptables/chain-names.js';
import { ProxyPipeline } from '../src/proxy/pipeline.js';
import { generateServices } from '../test/helpers/service-generator.js';
let t = performance.now();
for (let i = 0; i < 20000; i++) hash16('ns-1/svc-1:httptcp10.244.1.' + i + ':8080');
console.log('20k hash16', performance.now() - t);
const objects = generateServices(2000, { seed: 42 });
const [config] = compileConfigs({ objects: [], mode: 'iptables', nodeName: 'node-0', nodeIPs: ['172.18.0.2'], configText: 'clusterCIDR: 10.244.0.0/16\n' });
for (let k = 0; k < 3; k++) {
const p = new ProxyPipeline(ipt.buildProxier(config!));
feedObjects(p, objects);
t = performance.now();
const r = p.sync();
console.log('sync', performance.now() - t);
}
