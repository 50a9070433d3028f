// What `kdp up` and `kdp ui` print: a one-time login link to the web UI, asked of the running
// API server with the kubeconfig's own credentials (so the link acts as that user).

import { loadKubeconfig } from '../../client/kubeconfig.js';
import { buildTransport } from '../../client/http-transport.js';
import { kdpError } from '../../errors.js';

export interface UiLink {
  /** `https://127.0.0.1:6443/ui/login?token=…` */
  readonly url: string;
  readonly expiresAt: string;
}

export async function requestUiLink(kubeconfigPath: string): Promise<UiLink> {
  const kc = loadKubeconfig(kubeconfigPath);
  const t = buildTransport(kc);
  let r: { status: number; text: string };
  try {
    r = await t.call('POST', '/ui/links');
  } finally {
    t.close();
  }
  if (r.status !== 201) {
    let message = r.text;
    try {
      message = (JSON.parse(r.text) as { message?: string }).message ?? r.text;
    } catch {
      // not a Status
    }
    throw kdpError('KDP_UNAVAILABLE', `the API server gave no UI login link (${r.status}): ${message}`);
  }
  const { path, expiresAt } = JSON.parse(r.text) as { path: string; expiresAt: string };
  return { url: `${kc.server.replace(/\/+$/, '')}${path}`, expiresAt };
}

/** The lines `kdp up` prints about the UI; a link that cannot be had is said, not fatal. */
export async function uiLinkLines(kubeconfigPath: string, uiCommand: string): Promise<string> {
  try {
    const link = await requestUiLink(kubeconfigPath);
    return `Web UI (one-time link; \`${uiCommand}\` prints another):\n  ${link.url}\n\n`;
  } catch (e) {
    return `Web UI: no login link (${(e as Error).message}); try \`${uiCommand}\`\n\n`;
  }
}
