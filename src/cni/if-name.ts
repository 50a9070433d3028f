// Interface names as the kernel accepts them (dev_valid_name: 1..15 bytes, not `.` or `..`, no
// `/`, `:` or whitespace), with libcni's ValidateInterfaceName wording. kdp writes names into
// `ip -batch` lines, whose reader also gives quotes, `#` and `\` a meaning, so a name holding
// them is refused too: it could not reach the kernel as one argument.

/** Why `name` cannot be an interface name, or undefined when it can. */
export interface IfNameProblem {
  readonly msg: string;
  readonly details?: string;
}

// The kernel's isspace() also holds for 0xa0 (Latin-1 no-break space), byte-wise.
const KERNEL_BAD_BYTES = new Set([0x2f, 0x3a, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0]);
const BATCH_BAD_BYTES = new Set([0x22, 0x27, 0x23, 0x5c]);

export function ifNameProblem(name: string): IfNameProblem | undefined {
  if (name === '') return { msg: 'interface name is empty' };
  const bytes = Buffer.from(name, 'utf8');
  if (bytes.length > 15) {
    return { msg: 'interface name is too long',
      details: 'interface name should be less than 16 characters' };
  }
  if (name === '.' || name === '..') return { msg: 'interface name is . or ..' };
  if (bytes.some((b) => KERNEL_BAD_BYTES.has(b) || b === 0)) {
    return { msg: 'interface name contains / or : or whitespace characters' };
  }
  if (bytes.some((b) => BATCH_BAD_BYTES.has(b) || b < 0x20 || b === 0x7f)) {
    return { msg: 'interface name contains a quote, #, \\ or a control character' };
  }
  return undefined;
}
