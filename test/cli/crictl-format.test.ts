// crictl's text formats: tabwriter columns, go-units durations and sizes.

import { describe, expect, it } from 'vitest';
import { createdAgo, humanDuration, humanSize, table, truncatedId } from '../../src/cli/commands/crictl-format.js';

describe('crictl formats', () => {
  it('tables: columns at least 20 wide and 3 wider than their longest cell; the last unpadded', () => {
    // 24 characters + 3 = 27; the second column's longest is 2, so 20.
    expect(table([['A', 'BB', 'C'], ['a-very-long-cell-value-x', 'b', 'last']])).toBe(
      `${'A'.padEnd(27)}${'BB'.padEnd(20)}C\n${'a-very-long-cell-value-x'.padEnd(27)}${'b'.padEnd(20)}last\n`);
  });

  it('durations as go-units HumanDuration, with " ago" for CREATED', () => {
    expect([500, 1000, 42_000, 61_000, 5 * 60_000, 3_600_000, 5 * 3_600_000, 3 * 86_400_000].map(humanDuration))
      .toEqual(['Less than a second', '1 second', '42 seconds', 'About a minute', '5 minutes', 'About an hour',
        '5 hours', '3 days']);
    expect(createdAgo('1000000000000', 1_000_000 + 42_000)).toBe('42 seconds ago');
  });

  it('sizes with 3 significant digits in decimal units; IDs cut to 13 after the prefix', () => {
    expect([0, 999, 1234, 56_789_000].map(humanSize)).toEqual(['0B', '999B', '1.23kB', '56.8MB']);
    expect(truncatedId('sha256:0123456789abcdef', 'sha256:')).toBe('0123456789abc');
  });
});
