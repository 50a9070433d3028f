// The lab cloud's interfaces for the cloud-controller-manager's route and node controllers, as
// upstream's cloudprovider.Routes and the part of cloudprovider.InstancesV2 the node lifecycle
// controller uses. kdp up gives the controller manager an implementation (netns mode: the node
// namespaces of this machine; virtual mode: a table in memory); without one those controllers
// do not run, as upstream's do not for a cloud that lacks the interface.

export interface CloudRoute {
  /** The node whose pods the route leads to. */
  readonly targetNode: string;
  readonly destinationCIDR: string;
}

export interface CloudRoutes {
  list(): Promise<CloudRoute[]>;
  create(route: CloudRoute): Promise<void>;
  delete(route: CloudRoute): Promise<void>;
  /** Puts the table into effect again (a node booted anew lost its kernel routes); called after
   *  every reconcile. */
  settle?(): Promise<void>;
}

export interface CloudInstances {
  /** Whether the machine behind the Node still exists (upstream InstanceExists). */
  exists(nodeName: string): Promise<boolean>;
}

/** The table alone (virtual mode: no kernel; also the basis of the netns one). */
export function buildMemoryRoutes(onChange?: (routes: readonly CloudRoute[]) => Promise<void>): CloudRoutes {
  const table = new Map<string, CloudRoute>();
  const key = (r: CloudRoute) => `${r.targetNode}\0${r.destinationCIDR}`;
  const changed = () => onChange?.([...table.values()]) ?? Promise.resolve();
  return {
    list: async () => [...table.values()],
    async create(r) {
      table.set(key(r), { targetNode: r.targetNode, destinationCIDR: r.destinationCIDR });
      await changed();
    },
    async delete(r) {
      table.delete(key(r));
      await changed();
    },
    settle: changed,
  };
}
