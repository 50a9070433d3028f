import { compileConfigs } from '../src/proxy/compile.js';
import * as ipt from '../src/proxy/iptables/proxier.js';
import { ServiceChangeTracker } from '../src/proxy/service-change-tracker.js';
import { EndpointsChangeTracker } from '../src/proxy/endpoints-change-tracker.js';
import { generateServices } from '../test/helpers/service-generator.js';
const objects = generateServices(10000, { seed: 42 }) as any[];
const [config] = compileConfigs({ objects: [], mode: 'iptables', nodeName: 'node-0', nodeIPs: ['172.18.0.2'], configText: 'clusterCIDR: 10.244.0.0/16\n' });
const cpu = (f: () => void, label: string) => { const c0 = process.cpuUsage(); const t0 = performance.now(); f(); const c = process.cpuUsage(c0); console.log(label, 'cpu', ((c.user + c.system) / 1000).toFixed(0), 'wall', (performance.now() - t0).toFixed(0)); };
for (let round = 0; round < 2; round++) {
const st = new ServiceChangeTracker({ family: 'IPv4' });
const et = new EndpointsChangeTracker({ family: 'IPv4', nodeName: 'node-0' });
let s: any, e: any;
cpu(() => { for (const o of objects) o.kind === 'Service' ? st.update(undefined, o) : et.update(o); }, 'feed');
cpu(() => { s = st.checkout(); e = et.checkout(); }, 'checkout');
const px = ipt.buildProxier(config!);
let r: any;
cpu(() => { r = px.sync({ services: s.services, endpoints: e.endpoints }); }, 'proxier.sync');
}
