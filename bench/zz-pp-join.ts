const parts: string[] = [];
for (let i = 0; i < 80; i++) { const a: string[] = []; for (let j = 0; j < 128; j++) a.push(`-A KUBE-SERVICES -m comment --comment "ns-${i}/svc-${j}:http cluster IP" -m tcp -p tcp -d 10.96.${i}.${j} --dport 80 -j KUBE-SVC-ABCDEFGHIJKLMNOP`); parts.push(a.join('\n')); }
const m = new Map<string, object>(); for (let i = 0; i < 10000; i++) m.set('k' + i, { i });
for (let r = 0; r < 5; r++) {
  let t = performance.now(); const s = `x\n${parts.join('\n')}\nCOMMIT\n`; const t1 = performance.now();
  const m2 = new Map(m); const t2 = performance.now();
  console.log('join', (t1 - t).toFixed(2), s.length, 'map', (t2 - t1).toFixed(2), m2.size);
}
