import { writeFileSync } from 'node:fs';
import * as ipt from '../src/proxy/iptables/proxier.js';
import { compileWith } from '../src/proxy/compile.js';
import { generateServices } from '../test/helpers/service-generator.js';
const objects = generateServices(1000, { seed: 42 });
writeFileSync('.tmp-iptables/1000.txt', compileWith(ipt, { objects, mode: 'iptables', nodeName: 'node-0', nodeIPs: ['172.18.0.2'], configText: 'clusterCIDR: 10.244.0.0/16\n' }));
