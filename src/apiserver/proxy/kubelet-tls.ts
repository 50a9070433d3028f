// The API server's TLS hop to a kubelet (pods/exec|attach|portforward, pods/log, nodes/proxy),
// as kube-apiserver with --kubelet-certificate-authority: the kubelet's serving certificate
// must chain to the cluster CA *and* be valid for the address the API server dials — the
// Node's address (its InternalIP, else its first), not where kdp's dialer actually connects
// (a netns socket or a loopback relay). Go's tls.Dial verifies that name in the handshake, so
// a certificate for node A answering at node B's address is refused with Go's words:
// `tls: failed to verify certificate: x509: certificate is valid for 10.0.0.1, not 10.0.0.2`.
// Without the API server's kubelet client identity (no CA to check against) nothing is
// verified, as upstream without --kubelet-certificate-authority.

import { isIP, type Socket } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { connect as tlsConnect, type ConnectionOptions, type PeerCertificate, type TLSSocket } from 'node:tls';

/** The API server's client identity at kubelets and the CA their serving certificates chain to. */
export interface KubeletClientTls { readonly certPem: string; readonly keyPem: string; readonly caPem: string }

/** The code of the errors this module words as Go's TLS client (dialError passes them through). */
export const KUBELET_TLS_VERIFY = 'KDP_KUBELET_TLS_VERIFY';

const VERIFY_PREFIX = 'tls: failed to verify certificate: ';

function verifyError(x509Message: string): Error {
  return Object.assign(new Error(`${VERIFY_PREFIX}${x509Message}`), { code: KUBELET_TLS_VERIFY });
}

/** Go's net.IP.String() of a SAN as OpenSSL prints it (IPv6 compressed, lower case). */
function goIP(a: string): string {
  return a.includes(':') ? new URL(`http://[${a}]`).hostname.slice(1, -1) : a;
}

/**
 * Go's x509 Certificate.VerifyHostname(host) as an error message, or undefined when the
 * certificate is valid for `host`: IP hosts against IP SANs, names against DNS SANs (the
 * Common Name is never used, as Go since 1.15), with x509.HostnameError's wording.
 */
export function hostnameProblem(certDer: Buffer, host: string): string | undefined {
  const cert = new X509Certificate(certDer);
  const ip = isIP(host) !== 0;
  if (ip ? cert.checkIP(host) !== undefined : cert.checkHost(host, { subject: 'never' }) !== undefined) {
    return undefined;
  }
  const sans = (cert.subjectAltName ?? '').split(', ').filter(Boolean);
  const cn = /^CN=(.*)$/m.exec(cert.subject)?.[1];
  if (sans.length === 0 && cn !== undefined && cn.toLowerCase() === host.toLowerCase()) {
    return 'x509: certificate relies on legacy Common Name field, use SANs instead';
  }
  let valid: string[];
  if (ip) {
    valid = sans.filter((s) => s.startsWith('IP Address:')).map((s) => goIP(s.slice('IP Address:'.length)));
    if (valid.length === 0) return `x509: cannot validate certificate for ${host} because it doesn't contain any IP SANs`;
  } else {
    valid = sans.filter((s) => s.startsWith('DNS:')).map((s) => s.slice('DNS:'.length));
  }
  if (valid.length === 0) return `x509: certificate is not valid for any names, but wanted to match ${host}`;
  return `x509: certificate is valid for ${valid.join(', ')}, not ${host}`;
}

/** OpenSSL's chain verdicts in Go's x509 words. */
const CHAIN_ERRORS: Record<string, string> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'x509: certificate signed by unknown authority',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'x509: certificate signed by unknown authority',
  UNABLE_TO_GET_ISSUER_CERT: 'x509: certificate signed by unknown authority',
  SELF_SIGNED_CERT_IN_CHAIN: 'x509: certificate signed by unknown authority',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'x509: certificate signed by unknown authority',
  CERT_SIGNATURE_FAILURE: 'x509: certificate signed by unknown authority',
  CERT_HAS_EXPIRED: 'x509: certificate has expired or is not yet valid',
  CERT_NOT_YET_VALID: 'x509: certificate has expired or is not yet valid',
};

/**
 * TLS over `raw` to the kubelet the API server reaches at `host` (the Node's address). With
 * `tls`, the handshake fails unless the certificate chains to `tls.caPem` and is valid for
 * `host` (the error's code KUBELET_TLS_VERIFY, its message Go's); without, nothing is checked.
 */
export function connectKubelet(raw: Socket, host: string, tls: KubeletClientTls | undefined,
  extra: ConnectionOptions = {}): TLSSocket {
  if (!tls) return tlsConnect({ ...extra, socket: raw, rejectUnauthorized: false });
  const socket = tlsConnect({
    ...extra, socket: raw, cert: tls.certPem, key: tls.keyPem, ca: tls.caPem, rejectUnauthorized: true,
    checkServerIdentity: (_name: string, cert: PeerCertificate) => {
      const problem = hostnameProblem(cert.raw, host);
      return problem ? verifyError(problem) : undefined;
    },
  });
  // Every later listener (the http request, the splice) sees the error in Go's words.
  socket.prependListener('error', (e: NodeJS.ErrnoException) => {
    const words = e.code ? CHAIN_ERRORS[e.code] : undefined;
    if (words) {
      e.message = `${VERIFY_PREFIX}${words}`;
      e.code = KUBELET_TLS_VERIFY;
    }
  });
  return socket;
}
