import { compileConfigs, feedObjects, loadBackend } from '../src/proxy/compile.js';
import { ProxyPipeline } from '../src/proxy/pipeline.js';
import { generateServices } from '../test/helpers/service-generator.js';
const mode = (process.argv[2] ?? 'iptables') as any;
const backend = await loadBackend(mode);
const [config] = compileConfigs({ objects: [], mode, nodeName: 'node-0', nodeIPs: ['172.18.0.2'], configText: 'clusterCIDR: 10.244.0.0/16\n' });
const objects = generateServices(10000, { seed: 42 });
const p = new ProxyPipeline(backend.buildProxier(config!));
feedObjects(p, objects);
const cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1e3; };
const s: any = (p as any).services, e: any = (p as any).endpoints;
let t = cpu(); const a = s.checkout(); const b = e.checkout(); const t1 = cpu();
const changed = new Set<string>([...a.changedKeys, ...b.changedKeys]);
const r = p.proxier.sync({ services: a.services, endpoints: b.endpoints, changed });
const t2 = cpu();
console.log('checkout', (t1 - t).toFixed(0), 'proxier', (t2 - t1).toFixed(0), 'bytes', r.artifacts.reduce((x: number, y: any) => x + y.text.length, 0));
p.proxier.commit(true);
const slice = objects[2 * 777 + 1] as any;
import * as inspector from 'node:inspector';
import * as fs from 'node:fs';
const sess = new inspector.Session(); sess.connect();
const post = (m: string, a?: any) => new Promise<any>((res, rej) => sess.post(m, a, (e: any, r: any) => e ? rej(e) : res(r)));
if (process.env.PROF) { await post('Profiler.enable'); await post('Profiler.setSamplingInterval', { interval: 100 }); await post('Profiler.start'); }
let best = 1e9; let tot = 0;
for (let k = 0; k < 60; k++) {
  p.onEndpointSlice({ ...slice, endpoints: slice.endpoints.slice(0, 9 - (k % 2)) });
  const c0 = cpu(); const pr = p.sync(); const d = cpu() - c0; p.commit(true);
  best = Math.min(best, d); tot += d; if (pr.full) console.log('FULL');
}
console.log('partial best', best.toFixed(1), 'mean', (tot / 60).toFixed(1));
if (process.env.PROF) { const { profile } = await post('Profiler.stop'); fs.mkdirSync('/tmp/pq', { recursive: true }); fs.writeFileSync('/tmp/pq/x.cpuprofile', JSON.stringify(profile)); }
