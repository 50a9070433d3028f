// One stream for every kind the UI keeps live. A browser opens at most six HTTP/1.1
// connections to a server, so a watch per kind (plus the sync feed, a log, a trace) would
// starve its own requests; instead the UI server lists and watches each kind as the user
// (the in-process client: the same authorization, the same watch machinery as `?watch=1`) and
// writes one newline-delimited JSON stream:
//   {"kind":"pods","type":"RESET","items":[…]}   the whole list, first and after any relist
//   {"kind":"pods","type":"ADDED"|"MODIFIED"|"DELETED","object":{…}}
//   {"kind":"pods","type":"ERROR","message":"…"}  this kind is not readable (403, …)
//   {"kind":"sync","type":"SYNC","summary":{…}}   a node's kube-proxy synced (rules-data.ts)
// When a watch ends from the server side the stream ends, and the UI reconnects and relists.

import type { ServerResponse } from 'node:http';
import type { Client, KubeObject, ResourceRef, WatchHandle } from '../../client/types.js';
import { kdpError } from '../../errors.js';

export const UI_KINDS: Readonly<Record<string, ResourceRef>> = {
  nodes: { group: '', version: 'v1', resource: 'nodes' },
  pods: { group: '', version: 'v1', resource: 'pods' },
  services: { group: '', version: 'v1', resource: 'services' },
  endpointslices: { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' },
  events: { group: '', version: 'v1', resource: 'events' },
};

/** The kinds of a `kinds=a,b` parameter (default all), refusing unknown ones. */
export function parseKinds(text: string | undefined): string[] {
  const kinds = text ? text.split(',').filter(Boolean) : Object.keys(UI_KINDS);
  for (const k of kinds) {
    if (!(k in UI_KINDS)) {
      throw kdpError('KDP_BAD_REQUEST', `kinds: "${k}" is not one of ${Object.keys(UI_KINDS).join(', ')}`);
    }
  }
  return kinds;
}

/** Streams `kinds` to `res` until the client goes away or a watch ends; returns a stopper. */
export function streamKinds(client: Client, kinds: readonly string[], res: ServerResponse): () => void {
  const handles: WatchHandle[] = [];
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    for (const h of handles) h.stop();
    res.end();
  };
  const write = (line: unknown) => {
    if (!stopped) res.write(`${JSON.stringify(line)}\n`);
  };
  for (const kind of kinds) {
    const ref = UI_KINDS[kind]!;
    void (async () => {
      try {
        const list = await client.list<KubeObject>(ref);
        if (stopped) return;
        write({ kind, type: 'RESET', items: list.items });
        handles.push(client.watch(ref, { resourceVersion: list.metadata?.resourceVersion },
          { onEvent: (ev) => {
            if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') {
              write({ kind, type: ev.type, object: ev.object });
            } else if (ev.type === 'ERROR') {
              stop();
            }
          }, onClose: () => stop() }));
        if (stopped) handles[handles.length - 1]!.stop();
      } catch (e) {
        write({ kind, type: 'ERROR', message: (e as Error).message });
      }
    })();
  }
  return stop;
}
