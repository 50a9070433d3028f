// metav1.LabelSelector matching (matchLabels AND matchExpressions), for ClusterRole aggregation.

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: ReadonlyArray<{
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }>;
}

/** An empty selector matches everything, as upstream's LabelSelectorAsSelector. */
export function selectorMatches(sel: LabelSelector, labels: Record<string, string> = {}): boolean {
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) {
    if (labels[k] !== v) return false;
  }
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In': if (!has || !values.includes(labels[e.key]!)) return false; break;
      case 'NotIn': if (has && values.includes(labels[e.key]!)) return false; break;
      case 'Exists': if (!has) return false; break;
      case 'DoesNotExist': if (has) return false; break;
      default: return false;
    }
  }
  return true;
}
