// The server side of the Kubernetes streaming protocols (contract 2 of issue 13): exec/attach
// and port-forward over SPDY/3.1, WebSocket channels and SPDY tunnelled in WebSocket. Protocol
// only: it knows nothing of runtimes, authorization or Kubernetes objects; the caller has
// authorised the request and passes the process starter / dialer.

export { serveRemoteCommand } from './remote-command.js';
export { servePortForward } from './port-forward.js';
export type { Dial, PortForwardTarget } from './port-forward.js';
export { refuseUpgrade } from './http-upgrade.js';
export { childProcessStream, echoProcess, loopbackDial } from './fakes.js';
