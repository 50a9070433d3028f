// A stand-in for the host's resolver on loopback: fixed answers for a few names, NXDOMAIN for
// the rest, over UDP (what the forwarder uses first).

import { createSocket } from 'node:dgram';
import dnsPacket, { type Answer } from 'dns-packet';

export interface FakeUpstream {
  readonly port: number;
  readonly seen: string[];
  close(): void;
}

export async function startFakeUpstream(records: Record<string, Answer[]>): Promise<FakeUpstream> {
  const s = createSocket('udp4');
  const seen: string[] = [];
  s.on('message', (msg, r) => {
    const q = dnsPacket.decode(msg);
    const question = q.questions![0]!;
    seen.push(`${question.name} ${question.type}`);
    const answers = (records[`${question.name.toLowerCase()} ${question.type}`] ?? []);
    const known = Object.keys(records).some((k) => k.startsWith(`${question.name.toLowerCase()} `));
    s.send(dnsPacket.encode({ type: 'response', id: q.id, flags: dnsPacket.RECURSION_DESIRED
      | dnsPacket.RECURSION_AVAILABLE | (known ? 0 : 3), questions: q.questions, answers }),
    r.port, r.address);
  });
  await new Promise<void>((res) => s.bind(0, '127.0.0.1', res));
  return { port: s.address().port, seen, close: () => s.close() };
}
