// An in-memory IPVS table driven as `ipvsadm -R` (ipvsadm-restore) drives the kernel's, and
// dumped as `ipvsadm -Sn`. It fails the way ipvsadm 1.31 does (ipvsadm.c, libipvs's
// ipvs_strerror), which is not atomically:
// - each line is one ipvsadm command, applied in turn; a refused operation prints libipvs's
//   message ("Service already exists", "Service not defined", "No such destination", ...) and
//   the next line still runs; the exit status is the LAST line's (255 when it failed, else 0);
// - a line ipvsadm cannot read ends the run at once with exit 2 ("illegal virtual server
//   address[:port] specified", ...): the lines before it stay applied.
// kube-proxy programs IPVS over netlink, operation by operation, so a half-applied sync is what
// the kernel can hold too; kdp's netns mode refuses ipvs (no IP_VS module), virtual mode keeps
// ipvs tables here.

import { joinHostPort, splitHostPort } from '../ruleset/ipvs/address.js';
import { formatIpvsadm, virtualServerKey } from '../ruleset/ipvs/ipvsadm.js';
import type { ForwardMethod, IpvsProtocol, RealServer, VirtualServer } from '../ruleset/ipvs/types.js';

/** The schedulers of Linux's IPVS (a module per name: ip_vs_NAME). */
const SCHEDULERS = new Set(['rr', 'wrr', 'lc', 'wlc', 'lblc', 'lblcr', 'dh', 'sh', 'sed', 'nq', 'fo',
  'ovf', 'mh', 'twos']);
const PROTOCOLS = new Map<string, IpvsProtocol>([['-t', 'TCP'], ['--tcp-service', 'TCP'],
  ['-u', 'UDP'], ['--udp-service', 'UDP'], ['--sctp-service', 'SCTP']]);
const FORWARD = new Map<string, ForwardMethod>([['-m', 'masq'], ['--masquerading', 'masq'],
  ['-g', 'gate'], ['--gatewaying', 'gate'], ['-i', 'ipip'], ['--ipip', 'ipip']]);
const COMMANDS = new Set(['-A', '-E', '-D', '-a', '-e', '-d', '-C']);

export interface IpvsadmOutcome {
  readonly exitCode: number;
  readonly stderr: string;
}

interface Vs {
  protocol: IpvsProtocol; address: string; port: number; scheduler: string;
  persistence?: number; schedFlags: string[]; realServers: RealServer[];
}

/** ipvsadm's fail(2, …): the run stops here. */
class Unreadable extends Error {}

export class FakeIpvs {
  private services = new Map<string, Vs>();

  /** `ipvsadm -R` with `text` on stdin. */
  restore(text: string): IpvsadmOutcome {
    let stderr = '';
    let last = 0;
    for (const raw of text.split('\n')) {
      const argv = raw.trim().split(/\s+/).filter(Boolean);
      // config_stream: lines of one word (or none) are skipped.
      if (argv.length < 2) continue;
      try {
        const refused = this.command(argv);
        if (refused) stderr += `${refused}\n`;
        last = refused ? 255 : 0;
      } catch (e) {
        if (!(e instanceof Unreadable)) throw e;
        return { exitCode: 2, stderr: `${stderr}${e.message}\n` };
      }
    }
    return { exitCode: last, stderr };
  }

  /** `ipvsadm -Sn`. */
  save(): string {
    return formatIpvsadm({ virtualServers: [...this.services.values()] as VirtualServer[] });
  }

  /** One command line; returns libipvs's message when the operation is refused. */
  private command(argv: readonly string[]): string | undefined {
    const cmd = argv[0]!;
    if (!COMMANDS.has(cmd)) throw new Unreadable(`invalid option \`${cmd}'`);
    if (cmd === '-C') {
      this.services.clear();
      return undefined;
    }
    let protocol: IpvsProtocol | undefined;
    let service: { ip: string; port: number } | undefined;
    let dest: { ip: string; port: number } | undefined;
    let scheduler: string | undefined;
    let persistence: number | undefined;
    let schedFlags: string[] = [];
    let weight: number | undefined;
    let forward: ForwardMethod | undefined;
    for (let i = 1; i < argv.length; i++) {
      const opt = argv[i]!;
      const val = argv[i + 1];
      if (PROTOCOLS.has(opt)) {
        protocol = PROTOCOLS.get(opt);
        service = splitHostPort(val ?? '');
        if (!service) throw new Unreadable('illegal virtual server address[:port] specified');
        i++;
      } else if (opt === '-r' || opt === '--real-server') {
        dest = splitHostPort(val ?? '');
        if (!dest) throw new Unreadable('illegal real server address[:port] specified');
        i++;
      } else if (opt === '-s' || opt === '--scheduler') {
        scheduler = val;
        i++;
      } else if (opt === '-b' || opt === '--sched-flags') {
        schedFlags = (val ?? '').split(',').filter(Boolean);
        i++;
      } else if (opt === '-p' || opt === '--persistent') {
        if (!/^\d+$/.test(val ?? '') || Number(val) < 1 || Number(val) > 2678400) {
          throw new Unreadable(`invalid timeout value \`${val ?? ''}' specified`);
        }
        persistence = Number(val);
        i++;
      } else if (opt === '-w' || opt === '--weight') {
        if (!/^\d+$/.test(val ?? '') || Number(val) > 65535) throw new Unreadable('illegal weight specified');
        weight = Number(val);
        i++;
      } else if (FORWARD.has(opt)) {
        forward = FORWARD.get(opt);
      } else {
        throw new Unreadable(`invalid option \`${opt}'`);
      }
    }
    if (!service || !protocol) throw new Unreadable(`You need to supply the 'service-address' option for the '${cmd}' command`);
    const key = virtualServerKey({ address: service.ip, port: service.port, protocol });
    const vs = this.services.get(key);
    if (cmd === '-A' || cmd === '-E') {
      if (cmd === '-A' && vs) return 'Service already exists';
      if (cmd === '-E' && !vs) return 'No such service';
      const sched = scheduler ?? vs?.scheduler ?? 'wlc';
      if (!SCHEDULERS.has(sched)) return 'Scheduler or persistence engine not found';
      this.services.set(key, {
        protocol, address: service.ip, port: service.port, scheduler: sched,
        ...(persistence !== undefined ? { persistence } : {}), schedFlags, realServers: vs?.realServers ?? [],
      });
      return undefined;
    }
    if (cmd === '-D') {
      if (!vs) return 'No such service';
      this.services.delete(key);
      return undefined;
    }
    if (!dest) throw new Unreadable(`You need to supply the 'real-server' option for the '${cmd}' command`);
    if (!vs) return 'Service not defined';
    const at = vs.realServers.findIndex((r) => joinHostPort(r.address, r.port) === joinHostPort(dest!.ip, dest!.port));
    if (cmd === '-a') {
      if (at >= 0) return 'Destination already exists';
      vs.realServers.push({ address: dest.ip, port: dest.port, weight: weight ?? 1, forward: forward ?? 'gate' });
      return undefined;
    }
    if (at < 0) return 'No such destination';
    if (cmd === '-d') vs.realServers.splice(at, 1);
    else {
      const r = vs.realServers[at]!;
      vs.realServers[at] = { ...r, weight: weight ?? r.weight, forward: forward ?? r.forward };
    }
    return undefined;
  }
}
