// Upstream graceful_termination.go: a real server removed from a TCP virtual server is first
// given weight 0 and kept while it still has connections; UDP and SCTP ones are deleted at once.
// kdp has no connection table, so connection counts come from an injected function (0 = none).

import { realServerKey, type IpvsModel } from './ipvs-model.js';

/** Active + inactive connections of a real server (`vsKey`, `ip:port`); 0 when unknown. */
export type ConnectionCounter = (vsKey: string, rsKey: string) => number;

/** Upstream IsRsGracefulTerminationNeeded: not for UDP and SCTP. */
export function needsGracefulTermination(vsKey: string): boolean {
  return !vsKey.endsWith('/UDP') && !vsKey.endsWith('/SCTP');
}

export class GracefulTermination {
  /** Unique real-server names `vsKey/ip:port` waiting for their connections to end. */
  private readonly list: Set<string>;

  constructor(private readonly connections: ConnectionCounter, list: Iterable<string> = []) {
    this.list = new Set(list);
  }

  clone(): GracefulTermination {
    return new GracefulTermination(this.connections, this.list);
  }

  has(vsKey: string, rsKey: string): boolean {
    // Usually empty: skip building the name (this runs for every real server of every sync).
    return this.list.size > 0 && this.list.has(`${vsKey}/${rsKey}`);
  }

  entries(): string[] {
    return [...this.list];
  }

  /** Delete now when allowed, else set weight 0 and remember it (upstream GracefulDeleteRS). */
  gracefulDelete(ipvs: IpvsModel, vsKey: string, rsKey: string): void {
    if (this.tryDelete(ipvs, vsKey, rsKey)) return;
    const rs = ipvs.getRealServers(vsKey).find((r) => realServerKey(r) === rsKey);
    if (rs === undefined) return;
    ipvs.setRealServer(vsKey, { ...rs, weight: 0 });
    this.list.add(`${vsKey}/${rsKey}`);
  }

  /** A terminating real server that is wanted again: delete it so it can be re-added. */
  moveOut(ipvs: IpvsModel, vsKey: string, rsKey: string): void {
    ipvs.deleteRealServer(vsKey, rsKey);
    this.list.delete(`${vsKey}/${rsKey}`);
  }

  /** Upstream's periodic tryDeleteRs: delete every listed real server without connections. */
  flush(ipvs: IpvsModel): void {
    for (const name of [...this.list]) {
      const [vsKey, rsKey] = splitName(name);
      if (this.tryDelete(ipvs, vsKey, rsKey)) this.list.delete(name);
    }
  }

  /** Forget entries of virtual servers that no longer exist. */
  prune(ipvs: IpvsModel): void {
    for (const name of [...this.list]) {
      if (ipvs.getVirtualServer(splitName(name)[0]) === undefined) this.list.delete(name);
    }
  }

  private tryDelete(ipvs: IpvsModel, vsKey: string, rsKey: string): boolean {
    const exists = ipvs.getRealServers(vsKey).some((r) => realServerKey(r) === rsKey);
    if (!exists) return true;
    if (needsGracefulTermination(vsKey) && this.connections(vsKey, rsKey) !== 0) return false;
    ipvs.deleteRealServer(vsKey, rsKey);
    return true;
  }
}

/** `10.96.0.1:80/TCP/10.244.1.5:8080` → [`10.96.0.1:80/TCP`, `10.244.1.5:8080`]. */
function splitName(name: string): [string, string] {
  const i = name.indexOf('/', name.indexOf('/') + 1);
  return [name.slice(0, i), name.slice(i + 1)];
}
