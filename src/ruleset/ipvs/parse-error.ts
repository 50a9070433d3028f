import { kdpError, type KdpError } from '../../errors.js';

/**
 * A KDP_PARSE error naming the dump format, the 1-based line number and the reason. The cause's
 * `field` is `line N` so that callers can point at the offending line.
 */
export function parseError(format: string, lineNo: number, line: string, reason: string): KdpError {
  return kdpError('KDP_PARSE', `${format} line ${lineNo}: ${reason}: ${JSON.stringify(line)}`, {
    causes: [{ field: `line ${lineNo}`, reason: 'FieldValueInvalid', message: reason }],
  });
}

/** Split text into lines, dropping the one empty string a trailing newline leaves. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Lines back to text: newline-terminated, or '' for none. */
export function joinLines(lines: readonly string[]): string {
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
