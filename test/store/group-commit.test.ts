import { describe, expect, it } from 'vitest';
import { GroupCommitter, type LogSink } from '../../src/store/group-commit.js';
import type { WalRecord } from '../../src/store/record-codec.js';

/** A sink whose appends complete only when the test says so. */
function gatedSink() {
  const calls: { records: readonly WalRecord[]; finish: (err?: Error) => void }[] = [];
  const sink: LogSink = {
    append: (records) => new Promise<void>((resolve, reject) => {
      calls.push({ records, finish: (err) => (err ? reject(err) : resolve()) });
    }),
  };
  return { sink, calls };
}

const put = (revision: number): WalRecord =>
  ({ type: 'put', revision, key: `/k/${revision}`, value: 'v' });
const tick = () => new Promise((r) => setImmediate(r));

describe('group commit', () => {
  it('acknowledges nothing before the sink is durable, then all in submission order', async () => {
    const { sink, calls } = gatedSink();
    const committed: number[] = [];
    const acked: number[] = [];
    const gc = new GroupCommitter<number>(sink, (items) => committed.push(...items));
    const first = gc.submit(1, put(1)).then(() => acked.push(1));
    await tick();
    expect(calls).toHaveLength(1);
    const later = [2, 3, 4, 5].map((n) => gc.submit(n, put(n)).then(() => acked.push(n)));
    await tick();
    expect(calls).toHaveLength(1); // the rest wait for the flush in flight
    expect(acked).toEqual([]);
    calls[0]!.finish();
    await first;
    expect(committed).toEqual([1]);
    await tick();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.records.map((r) => r.revision)).toEqual([2, 3, 4, 5]); // one shared flush
    expect(acked).toEqual([1]);
    calls[1]!.finish();
    await Promise.all(later);
    expect(committed).toEqual([1, 2, 3, 4, 5]);
    expect(acked).toEqual([1, 2, 3, 4, 5]);
  });

  it('a failed flush rejects its batch, queued writes and every later write', async () => {
    const { sink, calls } = gatedSink();
    const committed: number[] = [];
    const gc = new GroupCommitter<number>(sink, (items) => committed.push(...items));
    const a = gc.submit(1, put(1));
    await tick();
    const b = gc.submit(2, put(2));
    calls[0]!.finish(new Error('EIO'));
    await expect(a).rejects.toMatchObject({ code: 'KDP_INTERNAL' });
    await expect(b).rejects.toMatchObject({ code: 'KDP_INTERNAL' });
    await expect(gc.submit(3, put(3))).rejects.toMatchObject({ code: 'KDP_INTERNAL' });
    expect(committed).toEqual([]);
    await gc.drain();
  });
});
