// Probes for netns tests: run a tiny Node client inside a namespace and return the echo
// workload's answer line (`pod=<name> from=<ip>:<port>`).

import type { HostExec } from '../../src/host/exec.js';

const CLIENT = `
const [proto, host, port] = process.argv.slice(1);
const done = (s) => { process.stdout.write(s); process.exit(0); };
setTimeout(() => { console.error('timeout'); process.exit(2); }, 4000);
if (proto === 'udp') {
  const s = (await import('node:dgram')).createSocket('udp4');
  s.on('message', (m) => done(m.toString()));
  const send = () => s.send('hi', Number(port), host);
  send(); setInterval(send, 500);
} else {
  const s = (await import('node:net')).connect(Number(port), host);
  let out = '';
  s.on('connect', () => s.write(proto === 'http' ? 'GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' : 'hi\\n'));
  s.on('data', (d) => { out += d; });
  s.on('end', () => done(out));
  s.on('error', (e) => { console.error(e.message); process.exit(1); });
}
`;

/** The answer of the echo workload at host:port, asked from inside `netns`. */
export async function probe(exec: HostExec, netns: string, proto: 'tcp' | 'udp' | 'http', host: string,
  port: number): Promise<string> {
  const { stdout } = await exec.run(process.execPath,
    ['--input-type=module', '-e', CLIENT, proto, host, String(port)], { netns, timeoutMs: 8000 });
  return stdout;
}

/** `from=<ip>` of an echo answer (`from=<ip>:<port>`; IPv6 bare or bracketed). */
export function seenSource(answer: string): string | undefined {
  const tok = /from=(\S+)/.exec(answer)?.[1];
  if (!tok) return undefined;
  const m = /^\[(.+)\]:\d+$/.exec(tok);
  return m ? m[1] : tok.slice(0, tok.lastIndexOf(':'));
}

export function seenPod(answer: string): string | undefined {
  return /pod=(\S+)/.exec(answer)?.[1];
}
