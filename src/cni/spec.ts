// CNI protocol facts: versions, error codes and the Go-compatible JSON the reference plugins
// print (4-space indent, no trailing newline, HTML-escaped <>&).

export const SUPPORTED_VERSIONS = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;
export const PLUGIN_VERSION = '1.1.0';

export const CNI_CODES = {
  incompatibleVersion: 1,
  unsupportedField: 2,
  unknownContainer: 3,
  invalidEnvironment: 4,
  ioFailure: 5,
  decodingFailure: 6,
  invalidNetworkConfig: 7,
  invalidNetns: 8,
  tryAgainLater: 11,
  pluginNotAvailable: 50,
  limitedConnectivity: 51,
  internal: 999,
} as const;

/** A CNI error result `{code, msg, details?}` (what libcni parses from stdout). */
export class CniError extends Error {
  constructor(
    readonly code: number,
    msg: string,
    readonly details?: string,
  ) {
    super(msg);
    this.name = 'CniError';
  }

  toJSON(): Record<string, unknown> {
    return { code: this.code, msg: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

/** Compares dotted versions numerically: negative when a < b. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export function isSupported(v: string): boolean {
  return (SUPPORTED_VERSIONS as readonly string[]).includes(v);
}

/** Go's `%q` of a string slice: `["a" "b"]`. */
export function goQuoteList(items: readonly string[]): string {
  return `[${items.map((s) => JSON.stringify(s)).join(' ')}]`;
}

/** json.MarshalIndent(v, "", "    ") as Go prints it. */
export function goJSON(v: unknown): string {
  return escapeHtml(JSON.stringify(v, null, 4));
}

/** json.Marshal (compact) as Go prints it. */
export function goJSONCompact(v: unknown): string {
  return escapeHtml(JSON.stringify(v));
}

function escapeHtml(s: string): string {
  return s.replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}
