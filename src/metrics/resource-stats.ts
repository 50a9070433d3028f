// A node's resource usage as the kubelet reports it to metrics-server: cumulative CPU seconds and
// the memory working set of the node, each pod and each container, with start times. Rendered as
// the kubelet's `/metrics/resource` (Prometheus text with sample timestamps, upstream's STABLE
// names) and `/stats/summary` (its JSON shape, the fields metrics-server and kubectl read), and
// parsed back from the text by the metrics collector, as metrics-server does.

export interface ContainerStats {
  readonly name: string;
  /** Cumulative CPU time in core-seconds since the container started. */
  readonly cpuSeconds: number;
  readonly memoryBytes: number;
  /** Unix milliseconds. */
  readonly startTime: number;
}

export interface PodStats {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly containers: readonly ContainerStats[];
}

export interface NodeStats {
  readonly node: string;
  /** When the sample was taken (unix milliseconds). */
  readonly timestamp: number;
  readonly cpuSeconds: number;
  readonly memoryBytes: number;
  /** When the node (its kubelet) started, unix milliseconds. */
  readonly startTime: number;
  readonly pods: readonly PodStats[];
}

const esc = (v: string) => (/[\\\n"]/.test(v) ? v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"') : v);
const num = (v: number) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(15))));

function family(name: string, type: 'counter' | 'gauge', help: string, lines: string[]): string {
  return `# HELP ${name} [STABLE] ${help}\n# TYPE ${name} ${type}\n${lines.join('')}`;
}

/** The kubelet's `/metrics/resource` text for one sample. */
export function renderResourceMetrics(s: NodeStats): string {
  const ts = Math.round(s.timestamp);
  const sample = (name: string, labels: Record<string, string>, v: number) => {
    const l = Object.entries(labels).map(([k, x]) => `${k}="${esc(x)}"`).join(',');
    return `${name}${l ? `{${l}}` : ''} ${num(v)} ${ts}\n`;
  };
  const cs = s.pods.flatMap((p) => p.containers.map((c) => ({ p, c,
    labels: { container: c.name, namespace: p.namespace, pod: p.name } })));
  const podLabels = (p: PodStats) => ({ namespace: p.namespace, pod: p.name });
  const sum = (p: PodStats, f: (c: ContainerStats) => number) => p.containers.reduce((a, c) => a + f(c), 0);
  return [
    family('container_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the container in core-seconds',
      cs.map((x) => sample('container_cpu_usage_seconds_total', x.labels, x.c.cpuSeconds))),
    family('container_memory_working_set_bytes', 'gauge', 'Current working set of the container in bytes',
      cs.map((x) => sample('container_memory_working_set_bytes', x.labels, x.c.memoryBytes))),
    family('container_start_time_seconds', 'gauge', 'Start time of the container since unix epoch in seconds',
      cs.map((x) => sample('container_start_time_seconds', x.labels, x.c.startTime / 1000))),
    family('node_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the node in core-seconds',
      [sample('node_cpu_usage_seconds_total', {}, s.cpuSeconds)]),
    family('node_memory_working_set_bytes', 'gauge', 'Current working set of the node in bytes',
      [sample('node_memory_working_set_bytes', {}, s.memoryBytes)]),
    family('pod_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the pod in core-seconds',
      s.pods.map((p) => sample('pod_cpu_usage_seconds_total', podLabels(p), sum(p, (c) => c.cpuSeconds)))),
    family('pod_memory_working_set_bytes', 'gauge', 'Current working set of the pod in bytes',
      s.pods.map((p) => sample('pod_memory_working_set_bytes', podLabels(p), sum(p, (c) => c.memoryBytes)))),
    family('resource_scrape_error', 'gauge', '1 if there was an error while getting container metrics, 0 otherwise',
      ['resource_scrape_error 0\n']),
  ].join('');
}

interface Sample { name: string; labels: Record<string, string>; value: number; ts?: number }

/** Label pairs of `a="x",b="y"` (escapes \\, \\n, \\"); undefined when malformed. */
function parseLabels(text: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('="', i);
    if (eq < 0) return text.slice(i).trim() === '' ? labels : undefined;
    const name = text.slice(i, eq).trim();
    let j = eq + 2;
    let value = '';
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') { j++; value += text[j] === 'n' ? '\n' : text[j]; } else value += text[j];
    }
    if (j >= text.length || !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name)) return undefined;
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
  }
  return labels;
}

/** Prometheus text exposition samples (no comments); throws on a malformed line. */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const open = line.indexOf('{');
    const close = open < 0 ? -1 : line.lastIndexOf('}');
    const name = open < 0 ? line.slice(0, line.indexOf(' ')) : line.slice(0, open);
    const labels = open < 0 ? {} : parseLabels(line.slice(open + 1, close));
    const rest = line.slice(open < 0 ? name.length : close + 1).trim().split(/\s+/);
    const value = Number(rest[0]);
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name) || !labels || (open >= 0 && close < open) || rest[0] === ''
      || rest.length > 2 || (Number.isNaN(value) && rest[0] !== 'NaN') || (rest[1] && !/^-?\d+$/.test(rest[1]))) {
      throw new Error(`malformed metrics line: ${line}`);
    }
    out.push({ name, labels, value, ...(rest[1] ? { ts: Number(rest[1]) } : {}) });
  }
  return out;
}

/** A node's stats back from its `/metrics/resource` text (pod UIDs are not in it: ''). */
export function parseResourceMetrics(node: string, text: string, fallbackTs = Date.now()): NodeStats {
  const samples = parseExposition(text);
  const pods = new Map<string, { namespace: string; name: string; containers: Map<string, Partial<ContainerStats>> }>();
  let cpu = 0; let mem = 0; let ts = 0;
  for (const s of samples) {
    if (s.ts && s.ts > ts) ts = s.ts;
    if (s.name === 'node_cpu_usage_seconds_total') cpu = s.value;
    else if (s.name === 'node_memory_working_set_bytes') mem = s.value;
    else if (s.name.startsWith('container_')) {
      const key = `${s.labels.namespace}/${s.labels.pod}`;
      const p = pods.get(key) ?? { namespace: s.labels.namespace ?? '', name: s.labels.pod ?? '', containers: new Map() };
      pods.set(key, p);
      const c = p.containers.get(s.labels.container ?? '') ?? {};
      p.containers.set(s.labels.container ?? '', c);
      if (s.name === 'container_cpu_usage_seconds_total') c.cpuSeconds = s.value;
      if (s.name === 'container_memory_working_set_bytes') c.memoryBytes = s.value;
      if (s.name === 'container_start_time_seconds') c.startTime = s.value * 1000;
    }
  }
  return { node, timestamp: ts || fallbackTs, cpuSeconds: cpu, memoryBytes: mem, startTime: 0,
    pods: [...pods.values()].map((p) => ({ namespace: p.namespace, name: p.name, uid: '',
      containers: [...p.containers].map(([name, c]) => ({ name, cpuSeconds: c.cpuSeconds ?? 0,
        memoryBytes: c.memoryBytes ?? 0, startTime: c.startTime ?? 0 })) })) };
}

/** The kubelet's `/stats/summary` (the fields of its Summary API that reflect what kdp measures). */
export function renderSummary(s: NodeStats): unknown {
  const time = new Date(s.timestamp).toISOString();
  const cpu = (sec: number) => ({ time, usageCoreNanoSeconds: Math.round(sec * 1e9) });
  const memory = (b: number) => ({ time, workingSetBytes: Math.round(b) });
  return {
    node: { nodeName: s.node, startTime: new Date(s.startTime).toISOString(), cpu: cpu(s.cpuSeconds),
      memory: memory(s.memoryBytes) },
    pods: s.pods.map((p) => ({
      podRef: { name: p.name, namespace: p.namespace, uid: p.uid },
      startTime: new Date(Math.min(...p.containers.map((c) => c.startTime), s.timestamp)).toISOString(),
      containers: p.containers.map((c) => ({ name: c.name, startTime: new Date(c.startTime).toISOString(),
        cpu: cpu(c.cpuSeconds), memory: memory(c.memoryBytes) })),
      cpu: cpu(p.containers.reduce((a, c) => a + c.cpuSeconds, 0)),
      memory: memory(p.containers.reduce((a, c) => a + c.memoryBytes, 0)),
    })),
  };
}
