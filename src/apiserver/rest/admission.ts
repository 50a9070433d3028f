// Runs admission around one write: mutating admit, then (after defaulting and validation)
// validating admit, then committed/aborted so allocators can release what a failed write took.

import type { AdmissionRequest, AdmissionPlugin } from '../pipeline-types.js';

export interface AdmissionRun {
  admit(): Promise<void>;
  validate(): Promise<void>;
  committed(): Promise<void>;
  aborted(): Promise<void>;
}

export function runAdmission(
  plugins: readonly AdmissionPlugin[], req: AdmissionRequest,
): AdmissionRun {
  let started = false;
  return {
    async admit() {
      started = true;
      for (const p of plugins) if (p.admit) await p.admit(req);
    },
    async validate() {
      for (const p of plugins) if (p.validate) await p.validate(req);
    },
    async committed() {
      for (const p of plugins) if (p.committed) await p.committed(req);
    },
    async aborted() {
      if (!started) return;
      for (const p of plugins) {
        try { if (p.aborted) await p.aborted(req); } catch { /* best effort */ }
      }
    },
  };
}
