// The model of what kube-proxy's ipvs mode leaves in one node's kernel (one IP family): IPVS
// virtual and real servers, ipsets, the supplementary iptables rules, and the addresses bound on
// the `kube-ipvs0` dummy device. Values are canonical strings (IPs as Go prints them), so two
// states compare with `===` on their formatted text.

export type IpvsProtocol = 'TCP' | 'UDP' | 'SCTP';

/** Forwarding method of a real server; kube-proxy only uses masquerading (`-m`). */
export type ForwardMethod = 'masq' | 'gate' | 'ipip';

export interface RealServer {
  readonly address: string;
  readonly port: number;
  /** 0 means quiesced: no new connections (graceful termination). */
  readonly weight: number;
  readonly forward: ForwardMethod;
}

export interface VirtualServer {
  readonly protocol: IpvsProtocol;
  readonly address: string;
  readonly port: number;
  readonly scheduler: string;
  /** Persistence timeout in seconds (flag persistent, `-p`); undefined when not persistent. */
  readonly persistence?: number;
  /** Scheduler flags as ipvsadm names them (`-b mh-port`); empty for none. */
  readonly schedFlags: readonly string[];
  readonly realServers: readonly RealServer[];
}

/** `ipvsadm -Sn` content. */
export interface IpvsTable {
  readonly virtualServers: readonly VirtualServer[];
}

export type IpSetType =
  | 'hash:ip'
  | 'hash:ip,port'
  | 'hash:ip,port,ip'
  | 'hash:ip,port,net'
  | 'bitmap:port';

export const IPSET_TYPES: readonly IpSetType[] = [
  'hash:ip', 'hash:ip,port', 'hash:ip,port,ip', 'hash:ip,port,net', 'bitmap:port',
];

/** One `create` option, in the order written: `family inet`, `hashsize 1024`, `comment`. */
export interface IpSetOption {
  readonly key: string;
  /** Undefined for flag options such as `comment` or `counters`. */
  readonly value?: string;
}

export interface IpSetEntry {
  /** The member as ipset prints it: `10.96.0.1,tcp:443`, `30080`, `1.2.3.4,tcp:80,10.0.0.0/8`. */
  readonly value: string;
  /** Per-entry comment (sets created with the `comment` option). */
  readonly comment?: string;
}

export interface IpSet {
  readonly name: string;
  readonly type: IpSetType;
  readonly options: readonly IpSetOption[];
  readonly entries: readonly IpSetEntry[];
}

/** The whole state one ipvs proxier owns, in the order its golden file lists the parts. */
export interface IpvsState {
  readonly ipvs: IpvsTable;
  readonly ipsets: readonly IpSet[];
  /** `iptables-restore --noflush` input (parse with `src/ruleset/iptables/`). */
  readonly iptables: string;
  /** Addresses on `kube-ipvs0` with prefix length, e.g. `10.96.0.1/32`. */
  readonly dummyAddresses: readonly string[];
}
