// The Status a remote command ends with, byte for byte as the kubelet marshals metav1.Status
// (Go's field order, empty fields left out), and the plain-text form pre-v4 protocols use.

export interface ExecStatus {
  readonly metadata: Record<string, never>;
  readonly status: 'Success' | 'Failure';
  readonly message?: string;
  readonly reason?: string;
  readonly details?: { causes: Array<{ reason?: string; message: string }> };
  readonly code?: number;
}

export function successStatus(): ExecStatus {
  return { metadata: {}, status: 'Success' };
}

/** Exec exited non-zero: upstream ServeExec with the CRI's ExitError text. */
export function nonZeroExitStatus(argv: readonly string[], code: number): ExecStatus {
  return {
    metadata: {},
    status: 'Failure',
    message: 'command terminated with non-zero exit code: '
      + `error executing command [${argv.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

/** apierrors.NewInternalError(err): what exec/attach failures after the upgrade become. */
export function internalErrorStatus(message: string): ExecStatus {
  return {
    metadata: {},
    status: 'Failure',
    message: `Internal error occurred: ${message}`,
    reason: 'InternalError',
    details: { causes: [{ message }] },
    code: 500,
  };
}

/** v4/v5: the JSON Status. */
export function encodeStatusV4(s: ExecStatus): Buffer {
  return Buffer.from(JSON.stringify(s));
}

/** v1..v3: nothing on success, else the error text (StatusError.Error() = message). */
export function encodeStatusV1(s: ExecStatus): Buffer | undefined {
  return s.status === 'Success' ? undefined : Buffer.from(s.message ?? '');
}
