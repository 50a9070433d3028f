import { parseAllDocuments } from 'yaml';
import { compileWith } from '../src/proxy/compile.js';
import * as backend from '../src/proxy/ipvs/proxier.js';
const y = `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  type: LoadBalancer
  clusterIP: 10.96.0.20
  clusterIPs: [10.96.0.20]
  externalIPs: [192.0.2.10]
  loadBalancerSourceRanges: [198.51.100.0/24]
  sessionAffinity: ClientIP
  ports: [{name: http, port: 80, targetPort: 8080, protocol: TCP, nodePort: 30080}]
status: {loadBalancer: {ingress: [{ip: 203.0.113.5}]}}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc, namespace: shop, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
- addresses: [10.244.1.5]
  conditions: {ready: true, serving: true, terminating: false}
  nodeName: node-a
- addresses: [10.244.2.7]
  conditions: {ready: true, serving: true, terminating: false}
  nodeName: node-b
`;
const objects = parseAllDocuments(y).map((d) => d.toJSON());
const cfg = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: ipvs
clusterCIDR: 10.244.0.0/16
`;
process.stdout.write(compileWith(backend, { objects, configText: cfg, nodeName: 'node-a', nodeIPs: ['172.18.0.2'], canonical: true }));
