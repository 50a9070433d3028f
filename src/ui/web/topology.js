// The topology: the underlay, each node (addresses, pod CIDRs, readiness, taints, its
// kube-proxy's mode and last sync) with its pods, and the Services with lines to their ready
// endpoints. Live: it re-renders from the store, at most once per frame.

import { html, Component } from 'htm/preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import {
  byName, clock, isPodReady, lbAddresses, nodeIPs, nodeReady, nsName, podCIDRs, podState,
  readyEndpoints, servicePorts,
} from './k8s.js';
import { href, withParams } from './router.js';
import { syncOf } from './sync.js';

/** Above this many endpoint lines, only the selected Service's are drawn. */
const MAX_LINES = 300;

class PodBox extends Component {
  shouldComponentUpdate(next) {
    return next.pod !== this.props.pod || next.mark !== this.props.mark ||
      next.selected !== this.props.selected || next.route !== this.props.route;
  }

  render({ pod, mark, selected, route }) {
    const key = nsName(pod);
    const state = podState(pod);
    const ready = isPodReady(pod);
    return html`<a class=${`pod ${state.toLowerCase()}${ready ? ' ready' : ''}${mark ? ' endpoint' : ''}${selected ? ' selected' : ''}`}
      data-pod=${key} href=${withParams(route, { pod: selected ? undefined : key })}
      title=${`${key}\n${pod.status?.podIP ?? 'no IP'} · ${state}${ready ? ' · ready' : ''}`}>
      <span class="pod-name"><i class=${`dot ${ready ? 'ok' : 'no'}`} aria-label=${ready ? 'ready' : 'not ready'}></i>${pod.metadata.name}</span>
      <span class="pod-ip">${pod.status?.podIP ?? '—'}</span>
      <span class="pod-phase">${state}</span>
    </a>`;
  }
}

const samePods = (a, b) => a.length === b.length && a.every((p, i) => p === b[i]);

/** A node's box re-renders only when the node, its pods or their marks change: one pod event
 *  touches one box, not all fifty. */
class NodeCard extends Component {
  shouldComponentUpdate(n) {
    const p = this.props;
    return n.node !== p.node || n.sync !== p.sync || n.syncSeq !== p.syncSeq || n.route !== p.route ||
      n.markedKey !== p.markedKey || n.selectedPod !== p.selectedPod || !samePods(n.pods, p.pods);
  }

  render(props) {
    return nodeCard(props);
  }
}

function nodeCard({ node, pods, sync, route, marked, selectedPod }) {
  const ready = nodeReady(node);
  const taints = node.spec?.taints ?? [];
  const last = sync?.syncs?.[sync.syncs.length - 1];
  const failed = sync?.apply?.some((a) => a.failed);
  const name = node.metadata.name;
  return html`<section class=${`node ${ready.toLowerCase()}`} data-node=${name} aria-label=${`node ${name}`}>
    <header>
      <h2>${name}</h2>
      <span class=${`badge ${ready === 'Ready' ? 'ok' : 'bad'}`}>${ready}</span>
      ${node.spec?.unschedulable ? html`<span class="badge warn">SchedulingDisabled</span>` : ''}
    </header>
    <dl>
      <dt>InternalIP</dt><dd class="node-ips">${nodeIPs(node).join(', ') || '—'}</dd>
      <dt>podCIDR</dt><dd class="node-cidrs">${podCIDRs(node).join(', ') || 'pending'}</dd>
      <dt>kube-proxy</dt><dd class="node-sync">${sync?.mode ?? '?'}${last
        ? html` · <a href=${href('rules', [name], { seq: String(last.seq) })}>sync #${last.seq}</a> ${clock(last.time)}`
        : ' · no sync yet'}${failed ? html` <span class="badge bad">apply failing</span>` : ''}</dd>
      ${taints.length ? html`<dt>taints</dt><dd class="taints">${taints.map((t) =>
        html`<span class="taint">${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}</span>`)}</dd>` : ''}
    </dl>
    <div class="pods" aria-label=${`pods on ${name}`}>
      ${pods.map((p) => html`<${PodBox} key=${nsName(p)} pod=${p} route=${route}
        mark=${marked.has(nsName(p))} selected=${selectedPod === nsName(p)} />`)}
    </div>
    <footer>${pods.length} pod${pods.length === 1 ? '' : 's'}</footer>
  </section>`;
}

function ServiceCard({ svc, endpoints, route, selected }) {
  const key = nsName(svc);
  const lbs = lbAddresses(svc);
  const port = svc.spec?.ports?.[0];
  return html`<div class=${`svc${selected ? ' selected' : ''}`} data-svc=${key}>
    <a class="svc-name" href=${withParams(route, { svc: selected ? undefined : key })}
      aria-pressed=${selected ? 'true' : 'false'}>${key}</a>
    <span class="svc-type">${svc.spec?.type ?? 'ClusterIP'}</span>
    <span class="svc-ip">${svc.spec?.clusterIP ?? ''} ${servicePorts(svc).join(' ')}</span>
    ${lbs.length ? html`<span class="svc-lb">LB ${lbs.join(', ')}</span>` : ''}
    <span class="svc-eps">${endpoints.length} ready endpoint${endpoints.length === 1 ? '' : 's'}</span>
    ${selected && port ? html`<span class="svc-actions"><a href=${href('trace', [], {
      dst: `svc/${key}:${port.name || port.port}` })}>trace to it</a> · <a
      href=${href('events', [], { obj: `Service/${key}` })}>events</a></span>` : ''}
  </div>`;
}

function PodDetails({ pod }) {
  const key = nsName(pod);
  return html`<div class="details" aria-label="selected pod">
    <h3>${key}</h3>
    <p>${podState(pod)}${isPodReady(pod) ? ', ready' : ', not ready'} on ${pod.spec?.nodeName ?? '(unscheduled)'}</p>
    <p>IP ${(pod.status?.podIPs ?? []).map((x) => x.ip).join(', ') || pod.status?.podIP || '—'}</p>
    <p class="labels">${Object.entries(pod.metadata.labels ?? {}).map(([k, v]) => html`<code>${k}=${v}</code> `)}</p>
    <p><a href=${href('trace', [], { src: key })}>trace from it</a> · <a
      href=${href('events', [], { obj: `Pod/${key}` })}>events</a> · <a
      href=${href('logs', [pod.metadata.namespace, pod.metadata.name])}>logs</a></p>
  </div>`;
}

/** Draws lines from each Service to its ready endpoints' boxes (imperatively: a frame's work). */
function drawLines(root, svg, pairs) {
  const base = root.getBoundingClientRect();
  const paths = [];
  for (const [svcKey, podKeys] of pairs) {
    const s = root.querySelector(`[data-svc="${CSS.escape(svcKey)}"]`);
    if (!s) continue;
    const sr = s.getBoundingClientRect();
    const x1 = sr.left - base.left;
    const y1 = sr.top + sr.height / 2 - base.top;
    for (const pk of podKeys) {
      const p = root.querySelector(`[data-pod="${CSS.escape(pk)}"]`);
      if (!p) continue;
      const pr = p.getBoundingClientRect();
      const x2 = pr.right - base.left;
      const y2 = pr.top + pr.height / 2 - base.top;
      const mid = (x1 + x2) / 2;
      paths.push(`<path d="M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}" data-line="${svcKey}>${pk}"/>`);
    }
  }
  svg.setAttribute('width', String(root.scrollWidth));
  svg.setAttribute('height', String(root.scrollHeight));
  svg.innerHTML = paths.join('');
}

export function Topology({ store, route, cluster }) {
  const sync = syncOf(store);
  const root = useRef(null);
  const svg = useRef(null);
  const ns = route.params.ns ?? '';
  const inNs = (o) => !ns || o.metadata.namespace === ns;
  const nodes = [...store.get('nodes').values()].sort(byName);
  const pods = [...store.get('pods').values()].filter(inNs).sort(byName);
  const services = [...store.get('services').values()].filter(inNs).sort(byName);
  const eps = readyEndpoints(store.get('endpointslices'));
  const selSvc = route.params.svc;
  const selPod = route.params.pod;
  const byNode = new Map(nodes.map((n) => [n.metadata.name, []]));
  const unscheduled = [];
  for (const p of pods) (byNode.get(p.spec?.nodeName) ?? unscheduled).push(p);
  const marked = new Set((selSvc ? eps.get(selSvc) ?? [] : []).map((e) => e.pod).filter(Boolean));
  const markedKey = [...marked].sort().join();
  const total = services.reduce((n, s) => n + (eps.get(nsName(s))?.length ?? 0), 0);
  const drawn = services.filter((s) => (selSvc ? nsName(s) === selSvc : total <= MAX_LINES))
    .map((s) => [nsName(s), (eps.get(nsName(s)) ?? []).map((e) => e.pod).filter(Boolean)]);
  useLayoutEffect(() => {
    if (root.current && svg.current) drawLines(root.current, svg.current, drawn);
  });
  useLayoutEffect(() => {
    const redraw = () => root.current && svg.current && drawLines(root.current, svg.current, drawn);
    addEventListener('resize', redraw);
    return () => removeEventListener('resize', redraw);
  });
  const pod = selPod ? store.get('pods').get(selPod) : undefined;
  const namespaces = [...new Set([...store.get('pods').values()].map((p) => p.metadata.namespace))].sort();
  return html`<div class="topology" ref=${root}>
    <svg class=${`lines${selSvc ? ' focused' : ''}`} ref=${svg} aria-hidden="true"></svg>
    <div class="toolbar">
      <label>namespace <select value=${ns} onChange=${(e) => { location.hash = withParams(route, { ns: e.currentTarget.value || undefined }); }}>
        <option value="">all namespaces</option>
        ${namespaces.map((n) => html`<option value=${n}>${n}</option>`)}
      </select></label>
      <span class="counts"><b class="count-nodes">${nodes.length}</b> nodes · <b class="count-pods">${pods.length}</b> pods · ${services.length} services</span>
    </div>
    <div class="underlay" aria-label="underlay network">
      <b>underlay</b> ${cluster?.mode ? `${cluster.mode} mode` : ''}${' · '}kube-proxy ${cluster?.proxyMode ?? '?'}
      ${' · '}nodes ${nodes.map((n) => `${n.metadata.name} ${nodeIPs(n)[0] ?? ''}`).join(' · ')}
      ${cluster?.clusterCIDRs ? ` · pods ${cluster.clusterCIDRs.join(', ')}` : ''}
      ${cluster?.serviceCIDRs ? ` · services ${cluster.serviceCIDRs.join(', ')}` : ''}
    </div>
    <div class="topo-body">
      <div class="nodes">
        ${nodes.map((n) => html`<${NodeCard} key=${n.metadata.name} node=${n} route=${route}
          pods=${byNode.get(n.metadata.name)} sync=${sync.get(n.metadata.name)}
          syncSeq=${sync.get(n.metadata.name)?.syncs?.map((x) => x.seq).join()} marked=${marked}
          markedKey=${markedKey}
          selectedPod=${selPod} />`)}
        ${unscheduled.length ? html`<section class="node unscheduled" data-node="">
          <header><h2>not scheduled</h2></header>
          <div class="pods">${unscheduled.map((p) => html`<${PodBox} key=${nsName(p)} pod=${p} route=${route}
            mark=${marked.has(nsName(p))} selected=${selPod === nsName(p)} />`)}</div></section>` : ''}
      </div>
      <aside class="services" aria-label="services">
        ${pod ? html`<${PodDetails} pod=${pod} />` : ''}
        <h2>Services</h2>
        ${services.map((s) => html`<${ServiceCard} key=${nsName(s)} svc=${s} route=${route}
          endpoints=${eps.get(nsName(s)) ?? []} selected=${selSvc === nsName(s)} />`)}
      </aside>
    </div>
  </div>`;
}
