function cpu<T>(label: string, f: () => T): T {
  const c = process.cpuUsage(); const t = performance.now();
  const r = f();
  const d = process.cpuUsage(c);
  console.log(label, 'cpu', ((d.user + d.system) / 1000).toFixed(0), 'ms wall', (performance.now() - t).toFixed(0));
  return r;
}
const N = 460000;
const names: string[] = [];
for (let i = 0; i < 10000; i++) names.push(`endpoint-ABCDEFGH-ns${i % 50}/svc-${i}/tcp/http__10.244.${i >> 8 & 255}.${i & 255}/8080`);
const T = 'ip kube-proxy';
cpu('array+join', () => { const a: string[] = []; for (let i = 0; i < N; i++) { const r = `ip saddr 10.244.1.${i & 255} jump mark-for-masquerade`; a.push(`add rule ${T} ${names[i % 10000]} ${r}`); } return a.join('\n').length; });
cpu('+= concat', () => { let s = ''; for (let i = 0; i < N; i++) { const r = `ip saddr 10.244.1.${i & 255} jump mark-for-masquerade`; s += `add rule ${T} ${names[i % 10000]} ${r}\n`; } return s.length + s.charCodeAt(5); });
cpu('buffer write', () => { const b = Buffer.allocUnsafe(80e6); let o = 0; for (let i = 0; i < N; i++) { const r = `ip saddr 10.244.1.${i & 255} jump mark-for-masquerade`; o += b.latin1Write(`add rule ${T} ${names[i % 10000]} ${r}\n`, o); } return b.latin1Slice(0, o).length; });
cpu('chunked 2048', () => { const chunks: string[] = []; let a: string[] = []; for (let i = 0; i < N; i++) { const r = `ip saddr 10.244.1.${i & 255} jump mark-for-masquerade`; a.push(`add rule ${T} ${names[i % 10000]} ${r}`); if (a.length >= 2048) { chunks.push(a.join('\n') + '\n'); a = []; } } return (chunks.join('') + a.join('\n')).length; });
