import { compileOffline } from '../src/proxy/compile.js';
const objects: any[] = [
 { apiVersion:'v1', kind:'Service', metadata:{namespace:'shop',name:'web'}, spec:{clusterIP:'10.96.0.20', ports:[{name:'http',port:80,targetPort:8080}]}},
 { apiVersion:'discovery.k8s.io/v1', kind:'EndpointSlice', metadata:{namespace:'shop',name:'web-abc',labels:{'kubernetes.io/service-name':'web'}}, addressType:'IPv4',
   endpoints:[{addresses:['10.244.1.5'],nodeName:'node-a',conditions:{ready:true}},{addresses:['10.244.2.7'],nodeName:'node-b'}], ports:[{name:'http',port:8080,protocol:'TCP'}]},
];
const cfg = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.244.0.0/16\n';
console.log(await compileOffline({objects, configText: cfg, mode:'iptables', nodeName:'node-a', nodeIPs:['172.18.0.2']}));
console.log(await compileOffline({objects, configText: cfg, mode:'iptables', nodeName:'node-a', nodeIPs:['172.18.0.2'], canonical:true}));
