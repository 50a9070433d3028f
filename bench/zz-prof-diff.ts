import { generateServices } from '../test/helpers/service-generator.js';
import { compileOffline } from '../src/proxy/compile.js';
import { runDiff } from '../src/diff/diff.js';
const objs = generateServices(1000, { seed: 7 });
const c = (mode: 'iptables' | 'nftables') => compileOffline({ objects: objs, mode, nodeName: 'node-0', nodeIPs: ['172.18.0.2'], configText: 'clusterCIDR: 10.244.0.0/16\n' });
const a = await c('iptables'); const b = await c('nftables');
let t = performance.now();
const out = runDiff({ label: 'a', text: a, format: 'iptables' }, { label: 'b', text: b, format: 'nftables' }, { view: 'behaviour', json: false, colour: false, nodeIPs: ['172.18.0.2'], podCIDRs: ['10.244.0.0/24'] });
console.log('behaviour', performance.now() - t, out.text.slice(-300));
