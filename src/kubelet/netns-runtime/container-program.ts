// What a container runs: its program through the image table (images.ts: Docker's
// entrypoint/cmd rules, the host's programs, kdp's stand-ins, the echo), its command and args
// with `$(VAR)` expanded, and its env — the base variables, the `kubernetes` Service's
// (KUBERNETES_SERVICE_HOST/PORT and the link variables, as upstream's kubelet gives), the
// image's, then the spec's (container-env.ts).

import { containerEnv, expandVars, type EnvContext } from '../container-env.js';
import { resolveImage } from '../images.js';
import { specOf, type NetnsPods, type Sandbox } from './pods.js';

export interface ContainerProgram {
  readonly file: string;
  readonly args: string[];
  readonly env: Record<string, string | undefined>;
  /** The image is not emulated faithfully (recorded once as a Warning Event). */
  readonly warning?: string;
}

/** The argv and env the container runs; rejects when its env cannot be built (a missing
 *  ConfigMap or Secret: CreateContainerConfigError). */
export async function containerProgram(ctx: NetnsPods, sb: Sandbox, name: string): Promise<ContainerProgram> {
  const { o } = ctx;
  const spec = specOf(sb, name)!;
  const ns = sb.pod.metadata.namespace ?? 'default';
  const envCtx: EnvContext = {
    podIPs: sb.podIPs, hostIPs: o.nodeIPs ?? (sb.pod.status?.hostIP ? [sb.pod.status.hostIP] : []),
    nodeName: o.nodeName,
    ...(o.lookup ? { lookup: (resource, n) => o.lookup!(ns, resource, n) } : {}),
  };
  const vars = await containerEnv(sb.pod, spec, envCtx);
  const expanded = {
    ...spec,
    ...(spec.command ? { command: spec.command.map((a) => expandVars(a, vars)) } : {}),
    ...(spec.args ? { args: spec.args.map((a) => expandVars(a, vars)) } : {}),
  };
  const prog = resolveImage(expanded, { echo: ctx.echo, runDns: !!sb.holder });
  const api = await o.apiService?.().catch(() => undefined);
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOSTNAME: sb.pod.spec?.hostname || sb.pod.metadata.name, HOME: '/root',
    ...(spec.tty ? { TERM: 'xterm' } : {}),
    KDP_POD_NAME: sb.pod.metadata.name,
    ...(api ? apiServiceEnv(api) : {}),
    ...prog.env,
    ...Object.fromEntries(vars),
  };
  return { file: prog.file, args: [...prog.args], env, ...(prog.warning ? { warning: prog.warning } : {}) };
}

/** The `kubernetes` Service's variables, as upstream's kubelet gives every container. */
function apiServiceEnv(api: { host: string; port: number }): Record<string, string> {
  const url = `tcp://${api.host.includes(':') ? `[${api.host}]` : api.host}:${api.port}`;
  return {
    KUBERNETES_SERVICE_HOST: api.host, KUBERNETES_SERVICE_PORT: String(api.port),
    KUBERNETES_SERVICE_PORT_HTTPS: String(api.port),
    KUBERNETES_PORT: url,
    [`KUBERNETES_PORT_${api.port}_TCP`]: url,
    [`KUBERNETES_PORT_${api.port}_TCP_PROTO`]: 'tcp', [`KUBERNETES_PORT_${api.port}_TCP_PORT`]: String(api.port),
    [`KUBERNETES_PORT_${api.port}_TCP_ADDR`]: api.host,
  };
}
