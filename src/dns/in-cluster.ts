// How a program in a pod finds the API server, as client-go's rest.InClusterConfig: the
// `kubernetes` Service from KUBERNETES_SERVICE_HOST/PORT, the pod's service-account token and
// the cluster CA from /var/run/secrets/kubernetes.io/serviceaccount/.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kdpError } from '../errors.js';
import type { HttpClientOptions } from '../client/http-client.js';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export function inClusterConfig(env: Readonly<Record<string, string | undefined>>,
  dir = SERVICE_ACCOUNT_DIR): HttpClientOptions {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw kdpError('KDP_CONFIG', 'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST ' +
      'and KUBERNETES_SERVICE_PORT must be defined (or give --kubeconfig)');
  }
  const read = (file: string, what: string) => {
    try {
      return readFileSync(join(dir, file), 'utf8');
    } catch (e) {
      throw kdpError('KDP_CONFIG', `in-cluster configuration: cannot read the ${what} ` +
        `${join(dir, file)}: ${(e as Error).message}`);
    }
  };
  const token = read('token', 'service-account token').trim();
  const caPem = read('ca.crt', 'cluster CA');
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return { server, token, caPem, userAgent: 'kdp-dns/0.1.0' };
}
