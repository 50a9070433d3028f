// A recording HostExec for unit tests and --dry-run: records every call and answers from scripted
// responses. It fails the way the real one does (KDP_HOST_EXEC with the command in the message),
// so callers' error paths are exercised too.

import { kdpError } from '../errors.js';
import { describe, type ExecOptions, type ExecResult, type HostExec } from './exec.js';

export interface RecordedCall {
  readonly file: string;
  readonly args: readonly string[];
  readonly input?: string;
  readonly netns?: string;
  readonly netnsPath?: string;
}

export type FakeResponse = ExecResult | { readonly fail: string };

interface Script {
  readonly match: (call: RecordedCall) => boolean;
  readonly response: FakeResponse;
}

export interface RecordingExec extends HostExec {
  readonly calls: RecordedCall[];
  /** Answer calls for which `match` is true (latest script wins). */
  on(match: (call: RecordedCall) => boolean, response: FakeResponse): void;
  /** The calls as command lines, e.g. `[netns n1] nft -f -`. */
  lines(): string[];
}

export function buildRecordingExec(): RecordingExec {
  const calls: RecordedCall[] = [];
  const scripts: Script[] = [];
  return {
    calls,
    on(match, response) {
      scripts.unshift({ match, response });
    },
    lines() {
      return calls.map((c) => describe(c.file, c.args, { netns: c.netns, netnsPath: c.netnsPath }));
    },
    async run(file: string, args: readonly string[], opts: ExecOptions = {}) {
      const call: RecordedCall = {
        file, args: [...args], netns: opts.netns, netnsPath: opts.netnsPath,
        input: typeof opts.input === 'string' || opts.input === undefined ? opts.input
          : opts.input.join(''),
      };
      calls.push(call);
      const hit = scripts.find((s) => s.match(call));
      if (hit && 'fail' in hit.response) {
        throw kdpError('KDP_HOST_EXEC', `${describe(file, args, opts)} failed (1): ${hit.response.fail}`);
      }
      return hit ? (hit.response as ExecResult) : { stdout: '', stderr: '' };
    },
  };
}
