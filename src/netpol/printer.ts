// `kubectl get networkpolicies` columns, as upstream's printNetworkPolicy: NAME POD-SELECTOR AGE.

import { formatLabelSelector } from '../api/selectors.js';
import type { LabelSelector } from '../api/types.js';
import { age } from '../apiserver/table/duration.js';
import type { Printer } from '../apiserver/table/types.js';
import { AGE_COL, NAME_COL, NONE, col, get } from '../apiserver/table/types.js';

const POD_SELECTOR = col('Pod-Selector', 0, 'podSelector selects the pods to which this '
  + 'NetworkPolicy object applies. The array of rules is applied to any pods selected by this '
  + "field. An empty selector matches all pods in the policy's namespace. Multiple network "
  + 'policies can select the same set of pods. In this case, the ingress rules for each are '
  + 'combined additively. This field is optional. If it is not specified, it defaults to an '
  + 'empty LabelSelector.');

export const networkPolicyPrinter: Printer = {
  columns: [NAME_COL, POD_SELECTOR, AGE_COL],
  row: (np, now) => {
    const sel = get(np, 'spec', 'podSelector') as LabelSelector | undefined;
    return [np.metadata.name ?? '', (sel && formatLabelSelector(sel)) || NONE,
      age(np.metadata.creationTimestamp, now)];
  },
};
