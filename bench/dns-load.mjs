// The DNS load generator of bench/dns.ts, a process of its own: CLIENTS UDP sockets, each with
// one query outstanding at a time (a closed loop, as a pod's resolver), names picked by a
// seeded PRNG from NAMES, for DURATION ms after WARMUP ms. Prints one JSON line: queries/s,
// p50/p99 latency (ms) of answered queries, lost (no answer within 1 s), rcodes.
//   node bench/dns-load.mjs HOST PORT CLIENTS DURATION WARMUP SEED NAMESFILE

import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import packet from 'dns-packet';

const [host, port, clients, duration, warmup, seed, namesFile] = process.argv.slice(2);
const names = readFileSync(namesFile, 'utf8').split('\n').filter(Boolean);
let s = Number(seed) >>> 0;
const rand = () => {
  s = (s + 0x6d2b79f5) >>> 0;
  let t = s;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const lat = [];
const rcodes = {};
let lost = 0;
let counting = false;
let stop = false;
const t0 = performance.now();
setTimeout(() => { counting = true; }, Number(warmup));

function client(i) {
  return new Promise((done) => {
    const sock = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    let id = (i * 4099) & 0xffff;
    let sent = 0;
    let timer;
    const next = () => {
      if (stop) { sock.close(); done(); return; }
      id = (id + 1) & 0xffff;
      const name = names[Math.floor(rand() * names.length)];
      const q = packet.encode({ type: 'query', id, flags: packet.RECURSION_DESIRED,
        questions: [{ type: 'A', name }] });
      sent = performance.now();
      timer = setTimeout(() => { if (counting) lost++; next(); }, 1000);
      sock.send(q, Number(port), host);
    };
    sock.on('message', (msg) => {
      if (msg.readUInt16BE(0) !== id) return;
      clearTimeout(timer);
      if (counting && !stop) {
        lat.push(performance.now() - sent);
        const rcode = msg[3] & 0x0f;
        rcodes[rcode] = (rcodes[rcode] ?? 0) + 1;
      }
      next();
    });
    sock.bind(0, () => next());
  });
}

const all = Array.from({ length: Number(clients) }, (_, i) => client(i));
setTimeout(() => { stop = true; }, Number(warmup) + Number(duration));
await Promise.all(all);
lat.sort((a, b) => a - b);
const pct = (p) => lat[Math.min(lat.length - 1, Math.max(0, Math.ceil(p / 100 * lat.length) - 1))] ?? NaN;
console.log(JSON.stringify({ qps: lat.length / (Number(duration) / 1000), p50: pct(50), p99: pct(99),
  answered: lat.length, lost, rcodes, elapsedMs: performance.now() - t0 }));
