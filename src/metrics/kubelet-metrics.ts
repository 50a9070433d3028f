// The kubelet's own `/metrics` under upstream's names (pkg/kubelet/metrics): running pods and
// containers, and the pod start-up SLI — from pod creation to all its containers running (the
// latest container startedAt), pods created before this kubelet started not counted, as
// upstream. Computed from the node's pods at each scrape (and at each `update()`).

import { Gauge, Histogram, Registry } from 'prom-client';
import type { Pod } from '../api/types.js';

const SLI_BUCKETS = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200,
  1800, 2700, 3600];

export interface KubeletMetrics {
  readonly registry: Registry;
  /** Records the start-up of pods that have started since the last call. */
  update(): void;
}

export function buildKubeletMetrics(o: { startTime: number; pods(): readonly Pod[] }): KubeletMetrics {
  const registry = new Registry();
  const recorded = new Set<string>();
  // Registered first, so its collect (which records new start-ups) runs before it is rendered.
  const sli: Histogram = new Histogram({ name: 'kubelet_pod_start_sli_duration_seconds',
    help: '[ALPHA] Duration in seconds to start a pod, excluding time to pull images and run init containers, '
      + 'measured from pod creation timestamp to when all its containers are reported as started and observed via watch',
    buckets: SLI_BUCKETS, registers: [registry], collect: () => update() });
  const update = () => {
    const live = new Set<string>();
    for (const p of o.pods()) {
      const uid = p.metadata.uid ?? '';
      live.add(uid);
      if (recorded.has(uid)) continue;
      const created = Date.parse(p.metadata.creationTimestamp ?? '');
      const statuses = p.status?.containerStatuses ?? [];
      const n = p.spec?.containers?.length ?? 0;
      if (!Number.isFinite(created) || !n || statuses.length < n) continue;
      const started = statuses.map((c) => Date.parse(c.state?.running?.startedAt ?? ''));
      if (started.some((t) => !Number.isFinite(t))) continue;
      recorded.add(uid);
      if (created < o.startTime) continue;
      sli.observe(Math.max(0, Math.max(...started) - created) / 1000);
    }
    for (const uid of recorded) if (!live.has(uid)) recorded.delete(uid);
  };
  new Gauge({ name: 'kubelet_running_pods', help: '[ALPHA] Number of pods that have a running pod sandbox',
    registers: [registry],
    collect() {
      this.set(o.pods().filter((p) => p.status?.phase === 'Running'
        || (p.status?.phase === 'Pending' && !!p.status.podIP)).length);
    } });
  new Gauge({ name: 'kubelet_running_containers', help: '[ALPHA] Number of containers currently running',
    labelNames: ['container_state'], registers: [registry],
    collect() {
      const counts = { running: 0, exited: 0, created: 0 };
      for (const p of o.pods()) {
        for (const c of p.status?.containerStatuses ?? []) {
          if (c.state?.running) counts.running++;
          else if (c.state?.terminated || c.lastState?.terminated) counts.exited++;
        }
      }
      this.reset();
      for (const [k, v] of Object.entries(counts)) this.set({ container_state: k }, v);
    } });
  return { registry, update };
}
