// The in-memory form of stored values: JSON text with the substrings Kubernetes objects repeat
// (field names, common values) replaced by two-character tokens, about 40 % of the size for
// pods. `JSON.stringify` never writes raw control characters, so a token is a control character
// (U+0001-U+001F) followed by a printable one; a value that does contain a control character
// is kept as is behind a U+0000 marker. Memory and snapshots use this form (a snapshot carries
// its dictionary, so the dictionary may change between versions); the WAL and every value a
// caller sees are the original text.

const TOKENS: readonly string[] = [
  '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"', '"apiVersion":"', '"kind":"',
  '"metadata":{', '"name":"', '"namespace":"', '"uid":"', '"resourceVersion":"',
  '"creationTimestamp":"', '"generateName":"', '"labels":{', '"annotations":{',
  '"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"',
  '"ownerReferences":[{', '"controller":true,"blockOwnerDeletion":true}]', '"controller":true',
  '"blockOwnerDeletion":true', '"spec":{', '"containers":[{"name":"', '"image":"',
  '"imagePullPolicy":"IfNotPresent"', '"imagePullPolicy":"', '"ports":[{"containerPort":',
  '"protocol":"TCP"', '"resources":{"limits":{"cpu":"', '"memory":"', '"requests":{"cpu":"',
  '"volumeMounts":[{"name":"kube-api-access-', '"readOnly":true',
  '"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"', '"restartPolicy":"Always"',
  '"terminationGracePeriodSeconds":', '"dnsPolicy":"ClusterFirst"',
  '"serviceAccountName":"default"', '"serviceAccountName":"', '"nodeName":"',
  '"schedulerName":"default-scheduler"', '"enableServiceLinks":true', '"priority":0',
  '"status":{"phase":"', '"status":{', '"phase":"', '"conditions":[{"type":"', '"type":"',
  '"status":"True"', '"status":"False"', '"lastProbeTime":null', '"lastTransitionTime":"',
  '"hostIP":"', '"podIP":"', '"podIPs":[{"ip":"', '"hostIPs":[{"ip":"', '"startTime":"',
  '"containerStatuses":[{"name":"', '"ready":true', '"restartCount":0', '"started":true',
  '"containerID":"containerd://', '"state":{"running":{"startedAt":"', '"lastState":{}',
  '"qosClass":"Burstable"', '"qosClass":"BestEffort"', '"qosClass":"Guaranteed"',
  '"qosClass":"', '"managedFields":[{"manager":"', '"operation":"Update"',
  '"fieldsType":"FieldsV1"', '"fieldsV1":{', '"time":"', '"f:metadata":{', '"f:labels":{',
  '"f:spec":{', '"f:containers":{', '"f:name":{}', '"f:image":{}', '"f:status":{',
  '"f:conditions":{', ':{}', '"k:{\\"name\\":\\"', '"k:{\\"type\\":\\"', '"generation":',
  '"pod-template-hash":"', '"terminationMessagePath":"/dev/termination-log"',
  '"terminationMessagePolicy":"File"', '"tolerations":[{', '"key":"node.kubernetes.io/not-ready"',
  '"key":"node.kubernetes.io/unreachable"', '"operator":"Exists"', '"effect":"NoExecute"',
  '"tolerationSeconds":300', '"securityContext":{}', '"Initialized"', '"ContainersReady"',
  '"PodScheduled"', '"Running"', '"Pending"', '"app":"', '"tier":"', '"containerPort":',
  '"data":{', '"selector":{', '"template":{', '"replicas":', '"endpoints":[{"addresses":["',
  '"conditions":{"ready":true', '"targetRef":{"kind":"Pod","namespace":"', '"ports":[{',
  '"port":', '"targetPort":', '"clusterIP":"', '"clusterIPs":["', '"ipFamilies":["IPv4"]',
  '"ipFamilyPolicy":"SingleStack"', '"sessionAffinity":"None"',
  '"internalTrafficPolicy":"Cluster"', '"addressType":"IPv4"', '"serving":true',
  '"terminating":false', '"kubernetes.io/service-name":"', '"holderIdentity":"',
  '"leaseDurationSeconds":', '"renewTime":"', '"acquireTime":"', '"matchLabels":{',
  '"strategy":{', '"observedGeneration":', '"availableReplicas":', '"readyReplicas":',
  'T00:00:00Z', '"true"', ':true,', ':false,',
];
// No short connectors ('":"', '","', '"},"', ...): matching is leftmost first, so a token that
// ends with the quote opening the next key (or starts with the one closing a value) takes it
// from the longer key token that follows; without them pods pack to ~40 % of their text, not
// ~62 %, in less time (fewer, longer matches).

const PER_LEAD = 95; // printable U+0020-U+007E after each lead character
const RAW = '\u0000';

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Packs and unpacks values with one dictionary (built once per store); an empty dictionary
 *  keeps values as they are (the store's `packValues: false`). */
export class ValueCodec {
  private readonly find: RegExp;
  private readonly code = new Map<string, string>();
  private readonly identity: boolean;

  /** The dictionary (empty: values kept as they are). Data written with it can be read back
   *  by a codec built from the same list, whatever the default dictionary is then. */
  readonly tokens: readonly string[];

  constructor(tokens: readonly string[] = TOKENS) {
    this.tokens = tokens;
    this.identity = tokens.length === 0;
    if (tokens.length > 31 * PER_LEAD) throw new Error('value dictionary too large');
    tokens.forEach((t, i) => this.code.set(t, String.fromCharCode(1 + Math.floor(i / PER_LEAD),
      0x20 + (i % PER_LEAD))));
    // Longest first, so that a longer token wins where two start at the same place.
    const order = [...tokens].sort((a, b) => b.length - a.length);
    this.find = new RegExp(order.map(escapeRe).join('|'), 'g');
  }

  /** True when `tokens` is this codec's dictionary (values packed with it need no repacking). */
  hasDictionary(tokens: readonly string[]): boolean {
    return tokens.length === this.tokens.length && tokens.every((t, i) => t === this.tokens[i]);
  }

  pack(value: string): string {
    if (this.identity) return value;
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f]/.test(value)) return RAW + value;
    return value.replace(this.find, (m) => this.code.get(m)!);
  }

  unpack(packed: string): string {
    if (this.identity) return packed;
    if (packed.charCodeAt(0) === 0) return packed.slice(1);
    // eslint-disable-next-line no-control-regex
    return packed.replace(/[\u0001-\u001f][\u0020-\u007e]/g, (m) =>
      this.tokens[(m.charCodeAt(0) - 1) * PER_LEAD + m.charCodeAt(1) - 0x20]!);
  }
}
