import { describe, expect, it } from 'vitest';
import { buildRecordingExec } from '../../src/host/fake-exec.js';
import { applyNft } from '../../src/host/rules.js';
import { isKdpError } from '../../src/errors.js';

describe('recording exec', () => {
  it('records namespaced commands with their input', async () => {
    const exec = buildRecordingExec();
    await applyNft(exec, 'kdp-n1', 'add table ip t\n');
    expect(exec.lines()).toEqual(['[netns kdp-n1] nft -f -']);
    expect(exec.calls[0]!.input).toBe('add table ip t\n');
  });

  it('fails like the real exec, with KDP_HOST_EXEC naming the command', async () => {
    const exec = buildRecordingExec();
    exec.on((c) => c.file === 'nft', { fail: 'syntax error' });
    const err = await applyNft(exec, 'kdp-n1', 'bogus').catch((e) => e);
    expect(isKdpError(err, 'KDP_HOST_EXEC')).toBe(true);
    expect(err.message).toContain('[netns kdp-n1] nft -f -');
  });
});
