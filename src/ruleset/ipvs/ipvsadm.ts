// `ipvsadm -Sn` (save, numeric) text: one `-A` line per virtual server followed by one `-a` line
// per real server, e.g.
//   -A -t 10.96.0.10:53 -s rr -p 10800
//   -a -t 10.96.0.10:53 -r 10.244.1.5:53 -m -w 1
// Protocol switches as ipvsadm prints them: `-t` TCP, `-u` UDP, `--sctp-service` SCTP.

import { joinHostPort, splitHostPort } from './address.js';
import { joinLines, parseError, splitLines } from './parse-error.js';
import type { ForwardMethod, IpvsProtocol, IpvsTable, RealServer, VirtualServer } from './types.js';

const PROTO_SWITCH: Record<IpvsProtocol, string> = {
  TCP: '-t', UDP: '-u', SCTP: '--sctp-service',
};
const SWITCH_PROTO = new Map<string, IpvsProtocol>([
  ['-t', 'TCP'], ['--tcp-service', 'TCP'], ['-u', 'UDP'], ['--udp-service', 'UDP'],
  ['--sctp-service', 'SCTP'],
]);
const FORWARD_SWITCH: Record<ForwardMethod, string> = { masq: '-m', gate: '-g', ipip: '-i' };
const SWITCH_FORWARD = new Map<string, ForwardMethod>([
  ['-m', 'masq'], ['-g', 'gate'], ['-i', 'ipip'],
]);

/** Identity of a virtual server as upstream's VirtualServer.String(): `10.96.0.1:443/TCP`. */
export function virtualServerKey(vs: Pick<VirtualServer, 'address' | 'port' | 'protocol'>): string {
  return `${joinHostPort(vs.address, vs.port)}/${vs.protocol}`;
}

/** `-t 10.96.0.1:443` (the service part shared by a virtual server's lines). */
export function serviceArgs(vs: Pick<VirtualServer, 'address' | 'port' | 'protocol'>): string {
  return `${PROTO_SWITCH[vs.protocol]} ${joinHostPort(vs.address, vs.port)}`;
}

export function formatVirtualServer(vs: VirtualServer): string {
  let line = `-A ${serviceArgs(vs)} -s ${vs.scheduler}`;
  if (vs.schedFlags.length > 0) line += ` -b ${vs.schedFlags.join(',')}`;
  if (vs.persistence !== undefined) line += ` -p ${vs.persistence}`;
  return line;
}

export function formatRealServer(vs: VirtualServer, rs: RealServer): string {
  return realServerLine(serviceArgs(vs), rs);
}

/** `-a SERVICE -r ip:port -m -w N`, given the virtual server's `serviceArgs`. */
/** `dest` is `joinHostPort(rs.address, rs.port)`, when the caller has it already. */
export function realServerLine(service: string, rs: RealServer,
  dest = joinHostPort(rs.address, rs.port)): string {
  return `-a ${service} -r ${dest} ${FORWARD_SWITCH[rs.forward]} -w ${rs.weight}`;
}

export function formatIpvsadm(table: IpvsTable): string {
  const lines: string[] = [];
  for (const vs of table.virtualServers) {
    lines.push(formatVirtualServer(vs));
    for (const rs of vs.realServers) lines.push(formatRealServer(vs, rs));
  }
  return joinLines(lines);
}

interface MutableVs extends Omit<VirtualServer, 'realServers'> {
  realServers: RealServer[];
}

/** Parse `ipvsadm -Sn` output. Throws KDP_PARSE naming the line for anything else. */
export function parseIpvsadm(text: string, firstLine = 1): IpvsTable {
  const servers: MutableVs[] = [];
  const byKey = new Map<string, MutableVs>();
  splitLines(text).forEach((line, i) => {
    const fail = (reason: string): never => {
      throw parseError('ipvsadm', i + firstLine, line, reason);
    };
    const tok = line.split(' ');
    const [cmd, protoSwitch, hostPort] = tok;
    const protocol = SWITCH_PROTO.get(protoSwitch ?? '');
    if (protocol === undefined) fail('expected -t, -u or --sctp-service after the command');
    const hp = splitHostPort(hostPort ?? '');
    if (hp === undefined) fail(`invalid service address ${JSON.stringify(hostPort ?? '')}`);
    const key = virtualServerKey({ address: hp!.ip, port: hp!.port, protocol: protocol! });
    const rest = tok.slice(3);
    if (cmd === '-A') {
      if (byKey.has(key)) fail(`duplicate virtual server ${key}`);
      const vs = { ...parseServiceOptions(rest, fail), protocol: protocol!, address: hp!.ip,
        port: hp!.port, realServers: [] };
      servers.push(vs);
      byKey.set(key, vs);
    } else if (cmd === '-a') {
      const vs = byKey.get(key) ?? fail(`real server for undeclared virtual server ${key}`);
      vs.realServers.push(parseRealServer(rest, fail));
    } else {
      fail('expected -A (virtual server) or -a (real server)');
    }
  });
  return { virtualServers: servers };
}

function parseServiceOptions(rest: string[], fail: (r: string) => never) {
  if (rest[0] !== '-s' || rest[1] === undefined || !/^[a-z]+$/.test(rest[1])) {
    fail('expected -s SCHEDULER');
  }
  const scheduler = rest[1]!;
  let schedFlags: string[] = [];
  let persistence: number | undefined;
  for (let i = 2; i < rest.length; i += 2) {
    const [opt, val] = [rest[i], rest[i + 1]];
    if (opt === '-b' && val !== undefined && /^[a-z-]+(,[a-z-]+)*$/.test(val)) {
      schedFlags = val.split(',');
    } else if (opt === '-p' && val !== undefined && /^\d+$/.test(val)) {
      persistence = Number(val);
    } else {
      fail(`unsupported virtual server option ${JSON.stringify(opt)}`);
    }
  }
  return { scheduler, schedFlags, persistence };
}

function parseRealServer(rest: string[], fail: (r: string) => never): RealServer {
  const [r, dest, fwd, w, weight, ...extra] = rest;
  if (r !== '-r') fail('expected -r ADDRESS:PORT');
  const hp = splitHostPort(dest ?? '') ?? fail(`invalid real server ${JSON.stringify(dest)}`);
  const forward = SWITCH_FORWARD.get(fwd ?? '') ?? fail('expected -m, -g or -i');
  if (w !== '-w' || weight === undefined || !/^\d+$/.test(weight)) fail('expected -w WEIGHT');
  if (extra.length > 0) fail(`unexpected ${JSON.stringify(extra.join(' '))}`);
  return { address: hp.ip, port: hp.port, weight: Number(weight), forward };
}
