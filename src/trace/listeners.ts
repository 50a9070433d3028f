// What listens where, as far as kdp can know it without asking a kernel: the sockets a pod's
// workload opens follow from its spec when every container runs a program kdp knows. A packet
// delivered to a port nothing listens on is refused by the pod's own kernel (TCP RST, ICMP
// port unreachable for UDP, SCTP ABORT), which a trace must say rather than "delivered".

import type { Pod } from '../api/types.js';

/** `PORT/PROTO` keys (`8080/TCP`) a pod listens on, or undefined when kdp cannot know. */
export function podListeners(pod: Pod): readonly string[] | undefined {
  const out: string[] = [];
  for (const c of pod.spec?.containers ?? []) {
    // kdp/echo with its own entrypoint listens on the container's declared ports, or 8080 when
    // it declares none, TCP and UDP both whatever the declared protocol (bin/kdp-echo.js,
    // KDP_ECHO_PORTS); never SCTP. Anything else: unknown.
    if (!isEcho(c.image) || c.command?.length || c.args?.length) return undefined;
    const ports = (c.ports ?? []).map((p) => p.containerPort);
    for (const port of ports.length ? ports : [8080]) out.push(`${port}/TCP`, `${port}/UDP`);
  }
  return out;
}

function isEcho(image: string | undefined): boolean {
  if (!image) return false;
  const bare = image.replace(/^docker\.io\//, '').replace(/@.*$/, '');
  return bare === 'kdp/echo' || bare.startsWith('kdp/echo:');
}

/** How the pod's kernel refuses a packet to a port without a listener. */
export function refusal(proto: string): string {
  switch (proto) {
    case 'tcp': return 'the kernel answers RST (connection refused)';
    case 'udp': return 'the kernel answers ICMP port unreachable';
    case 'sctp': return 'the kernel answers ABORT';
    default: return 'refused';
  }
}
