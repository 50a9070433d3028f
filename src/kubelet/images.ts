// What a container runs: the images kdp knows run natively, with Docker's entrypoint/cmd rules.
// An image has an entrypoint E and a default cmd C; the pod's `command` replaces E (and drops C),
// its `args` replace C. So: command given → command + args; only args → E + args (args alone
// when the image has no entrypoint, as busybox); neither → E + C. The host's programs are every
// image's programs; what an image ships that the host lacks (`/agnhost`, `/pause`, nginx's page)
// is one of kdp's small programs under bin/ (Node scripts started with process.execPath).
//
// | image                                   | E + C                      | runs                    |
// | kdp/echo                                | echo                       | kdp's echo              |
// | kdp/dns                                 | the cluster DNS server     | bin/kdp-dns.js          |
// | registry.k8s.io/pause, k8s.gcr.io/pause | /pause                     | bin/kdp-pause.js        |
// | …/e2e-test-images/agnhost               | /agnhost pause             | bin/kdp-agnhost.js      |
// | nginx, httpd, caddy, */nginx*, …        | the web server             | bin/kdp-web.js          |
// | busybox, alpine, ubuntu, debian, …      | sh (bash for ubuntu/debian)| the host's shell        |
// | registry.k8s.io/kube-proxy, hostNetwork | kube-proxy                 | kdp's kube-proxy (*)    |
// | kdp/cni, hostNetwork                    | the pod network's agent    | kdp's route agent (*)   |
// | anything else                           | unknown                    | kdp's echo + a warning  |
// (*) not a process: the kubelet runs them in its own process (host-components.ts); elsewhere
// (no hostNetwork) they are unknown images.

import { fileURLToPath } from 'node:url';
import type { Container } from '../api/types.js';
import { ECHO_JS_FLAGS } from './echo-command.js';

/** The program the runtime starts for a container (argv[0] = file, resolved on PATH). */
export interface ImageCommand {
  readonly file: string;
  readonly args: readonly string[];
  /** Variables the program needs, merged over the container's own env by the runtime. */
  readonly env?: Readonly<Record<string, string>>;
  /** Set when kdp had to guess: the runtime records it as a Warning Event on the pod. */
  readonly warning?: string;
}

export interface ImageContext {
  /** The kdp/echo program (echo-command.ts), also the stand-in for unknown images. */
  readonly echo: { readonly file: string; readonly args: readonly string[] };
  /** The pause program; default the JS one (bin/kdp-pause.js). */
  readonly pause?: { readonly file: string; readonly args: readonly string[] };
  /** Directory of kdp's image programs; default this checkout's bin/. */
  readonly binDir?: string;
  /** kdp/dns runs the DNS server (it needs the pod's volumes and in-cluster credentials);
   *  false: the echo stands in, as for an unknown image. */
  readonly runDns?: boolean;
}

/** An image reference split as Docker does: `registry/path:tag@digest`, docker.io defaults. */
export interface ImageRef {
  /** Registry host, `docker.io` when none is given. */
  readonly registry: string;
  /** Repository path, `library/` dropped for docker.io official images (`nginx`). */
  readonly path: string;
  readonly tag: string;
}

export function parseImage(image: string): ImageRef {
  const noDigest = image.split('@')[0] ?? '';
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  const tag = colon > slash ? noDigest.slice(colon + 1) : 'latest';
  const name = colon > slash ? noDigest.slice(0, colon) : noDigest;
  const parts = name.split('/');
  const first = parts[0] ?? '';
  const hasRegistry = parts.length > 1 && (first.includes('.') || first.includes(':')
    || first === 'localhost');
  const registry = hasRegistry ? first : 'docker.io';
  let path = (hasRegistry ? parts.slice(1) : parts).join('/');
  if (registry === 'docker.io' || registry === 'index.docker.io') path = path.replace(/^library\//, '');
  return { registry: registry === 'index.docker.io' ? 'docker.io' : registry, path, tag };
}

/** What an image is, for kdp: which program stands in for it. */
export type ImageKind = 'echo' | 'dns' | 'pause' | 'agnhost' | 'web' | 'shell' | 'kube-proxy' | 'cni'
  | 'unknown';

const K8S_REGISTRIES = new Set(['registry.k8s.io', 'k8s.gcr.io', 'gcr.io', 'us.gcr.io',
  'eu.gcr.io', 'asia.gcr.io']);
const WEB = new Set(['nginx', 'httpd', 'caddy', 'traefik/whoami', 'nginxinc/nginx-unprivileged',
  'bitnami/nginx', 'bitnami/apache', 'openresty/openresty', 'lighttpd']);
/** Images whose cmd is a shell, and which shell. */
const SHELLS: Readonly<Record<string, string>> = {
  busybox: 'sh', alpine: 'sh', ubuntu: 'bash', debian: 'bash', fedora: 'bash',
  centos: 'bash', rockylinux: 'bash', almalinux: 'bash', amazonlinux: 'bash',
  'nicolaka/netshoot': 'zsh', 'praqma/network-multitool': 'sh', 'wbitt/network-multitool': 'sh',
  'library/busybox': 'sh', 'e2e-test-images/busybox': 'sh', 'busybox/busybox': 'sh',
};

export function imageKind(image: string | undefined): ImageKind {
  if (!image) return 'unknown';
  const r = parseImage(image);
  const last = r.path.split('/').pop() ?? '';
  if (r.path === 'kdp/echo') return 'echo';
  if (r.path === 'kdp/dns') return 'dns';
  if (r.path === 'kdp/cni') return 'cni';
  if (K8S_REGISTRIES.has(r.registry) && /(^|\/)kube-proxy(-amd64|-arm64)?$/.test(r.path)) return 'kube-proxy';
  if (K8S_REGISTRIES.has(r.registry) && /(^|\/)pause$/.test(r.path)) return 'pause';
  if (K8S_REGISTRIES.has(r.registry) && /(^|\/)agnhost$/.test(r.path)) return 'agnhost';
  if (WEB.has(r.path) || /(^|\/)nginx[^/]*$/.test(r.path) || last === 'httpd') return 'web';
  if (SHELLS[r.path] || SHELLS[last]) return 'shell';
  return 'unknown';
}

/** The agnhost subcommands bin/kdp-agnhost.js emulates. */
export const AGNHOST_SUBCOMMANDS: readonly string[] =
  ['netexec', 'serve-hostname', 'pause', 'liveness', 'porter'];

const here = (name: string, binDir?: string) => binDir ? `${binDir}/${name}`
  : fileURLToPath(new URL(`../../bin/${name}`, import.meta.url));

function node(script: string, args: readonly string[], env?: Record<string, string>): ImageCommand {
  return { file: process.execPath, args: [...ECHO_JS_FLAGS, script, ...args], ...(env ? { env } : {}) };
}

const echoPorts = (c: Container) =>
  (c.ports ?? []).map((p) => `${p.containerPort}/${p.protocol ?? 'TCP'}`).join(',');

/**
 * The program for `c`. Pure: no file is checked and nothing starts. `command[0]` naming an image's
 * own binary (`/agnhost`, `/pause`, `nginx` in an nginx image) maps to kdp's stand-in for it;
 * any other command runs as given, from the host.
 */
export function resolveImage(c: Container, ctx: ImageContext): ImageCommand {
  const kind = imageKind(c.image);
  const args = c.args ?? [];
  const image = c.image ?? '(none)';
  if (c.command && c.command.length > 0) {
    const [file, ...rest] = c.command;
    const mapped = imageBinary(kind, file!, [...rest, ...args], c, ctx);
    return mapped ?? { file: file!, args: [...rest, ...args] };
  }
  switch (kind) {
    case 'echo':
      return { file: ctx.echo.file, args: [...ctx.echo.args], env: { KDP_ECHO_PORTS: echoPorts(c) } };
    case 'pause':
      return pause(ctx);
    case 'dns':
      if (!ctx.runDns) return { file: ctx.echo.file, args: [...ctx.echo.args], env: { KDP_ECHO_PORTS: echoPorts(c) } };
      // Not the echo's small heap: the server keeps the cluster's Services and Endpoints.
      return { file: process.execPath, args: [here('kdp-dns.js', ctx.binDir), ...args] };
    case 'agnhost':
      return agnhost(args.length > 0 ? args : ['pause'], ctx);
    case 'web':
      return web(c, ctx);
    case 'shell': {
      if (args.length > 0) return { file: args[0]!, args: args.slice(1) };
      const r = parseImage(image);
      return { file: SHELLS[r.path] ?? SHELLS[r.path.split('/').pop() ?? ''] ?? 'sh', args: [] };
    }
    default:
      // Most images without a known entrypoint take their args as the command (kubectl run IMG
      // -- sh -c …); the guess is said in the warning.
      if (args.length > 0) {
        return { file: args[0]!, args: args.slice(1),
          warning: `kdp does not know the entrypoint of image ${image}; running its args as the ` +
            `command (the host's ${args[0]})` };
      }
      return { file: ctx.echo.file, args: [...ctx.echo.args], env: { KDP_ECHO_PORTS: echoPorts(c) },
        warning: `kdp does not run image ${image} natively and the container has no command; ` +
          'running the kdp/echo workload on its ports instead' };
  }
}

function imageBinary(kind: ImageKind, file: string, rest: string[], c: Container,
  ctx: ImageContext): ImageCommand | undefined {
  const base = file.split('/').pop();
  if (kind === 'agnhost' && base === 'agnhost') return agnhost(rest, ctx);
  if (kind === 'pause' && base === 'pause') return pause(ctx);
  if (kind === 'dns' && (base === 'coredns' || base === 'kdp-dns')) {
    return { file: process.execPath, args: [here('kdp-dns.js', ctx.binDir), ...rest] };
  }
  if (kind === 'web' && (base === 'nginx' || base === 'httpd' || base === 'httpd-foreground'
    || base === 'docker-entrypoint.sh' || base === 'caddy')) return web(c, ctx);
  return undefined;
}

function pause(ctx: ImageContext): ImageCommand {
  return ctx.pause ? { file: ctx.pause.file, args: [...ctx.pause.args] }
    : node(here('kdp-pause.js', ctx.binDir), []);
}

function agnhost(args: readonly string[], ctx: ImageContext): ImageCommand {
  const cmd = node(here('kdp-agnhost.js', ctx.binDir), args);
  const sub = args.find((a) => !a.startsWith('-'));
  if (!sub || AGNHOST_SUBCOMMANDS.includes(sub)) return cmd;
  return { ...cmd, warning: `agnhost subcommand ${sub} is not emulated by kdp (it emulates ` +
    `${AGNHOST_SUBCOMMANDS.join(', ')}); the container will exit with an error` };
}

function web(c: Container, ctx: ImageContext): ImageCommand {
  const r = parseImage(c.image ?? 'nginx');
  const last = r.path.split('/').pop() ?? '';
  const flavor = last.startsWith('nginx') || r.path.includes('nginx') || last === 'openresty'
    ? 'nginx' : last === 'httpd' || last === 'apache' ? 'httpd' : last === 'caddy' ? 'caddy'
      : 'nginx';
  const tcp = (c.ports ?? []).filter((p) => (p.protocol ?? 'TCP') === 'TCP').map((p) => p.containerPort);
  const ports = [...new Set(tcp.length > 0 ? tcp : [80])];
  const version = /^\d+(\.\d+)*$/.test(r.tag) ? r.tag : '';
  return node(here('kdp-web.js', ctx.binDir), [], {
    KDP_WEB_FLAVOR: flavor, KDP_WEB_PORTS: ports.join(','), KDP_WEB_VERSION: version,
  });
}
