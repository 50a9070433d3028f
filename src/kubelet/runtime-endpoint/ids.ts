// The runtime's identifiers, shaped as a CRI runtime's: 64 hex digits for sandboxes and
// containers (crictl shows the first 13), `sha256:<hex>` for images. Derived, not random, so the
// kubelet's `containerStatuses[].containerID` (`kdp://<id>`) and the runtime endpoint agree
// without sharing state; a container's ID changes with each attempt (restart), as upstream's.

import { createHash } from 'node:crypto';

const hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** The pod's sandbox ID (one sandbox per pod UID). */
export function sandboxId(podUid: string): string {
  return hex(`kdp-sandbox/${podUid}`);
}

/** The ID of one run (`attempt` = its restartCount) of a pod's container. */
export function containerId(podUid: string, container: string, attempt: number): string {
  return hex(`kdp-container/${podUid}/${container}/${attempt}`);
}

/** What `containerStatuses[].containerID` carries: `<runtime>://<id>`. */
export function containerIdUrl(podUid: string, container: string, attempt: number): string {
  return `kdp://${containerId(podUid, container, attempt)}`;
}

/** An image reference as a registry names it (Docker's defaulting): `busybox` is
 *  `docker.io/library/busybox:latest`, `kdp/echo` is `docker.io/kdp/echo:latest`. */
export function normalizeImageRef(ref: string): string {
  let name = ref.trim() || 'kdp/echo';
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  if (slash < 0) name = `docker.io/library/${name}`;
  else if (!first.includes('.') && !first.includes(':') && first !== 'localhost') name = `docker.io/${name}`;
  const last = name.slice(name.lastIndexOf('/') + 1);
  if (!last.includes(':') && !name.includes('@')) name = `${name}:latest`;
  return name;
}

/** The image's ID (`sha256:<hex>`): kdp pulls nothing, so a digest of its normalised name. */
export function imageId(ref: string): string {
  return `sha256:${hex(`kdp-image/${normalizeImageRef(ref)}`)}`;
}
