// Artifacts from a TextSink's output: a flat text as it is, pieces behind a lazily joined text.

import type { Artifact } from './backend.js';

/** An artifact whose text is its chunks joined, once, when first read. */
class ChunkedArtifact implements Artifact {
  private flat: string | undefined;

  constructor(readonly kind: string, readonly chunks: readonly string[]) {}

  get text(): string {
    this.flat ??= this.chunks.join('');
    return this.flat;
  }
}

/** Below this many pieces (about 1 MB) a text is joined at once: chunks only pay when large. */
const MIN_CHUNKS = 128;

/** `out` is what `TextSink.finish()` returned. */
export function textArtifact(kind: string, out: string | readonly string[]): Artifact {
  if (typeof out === 'string') return { kind, text: out };
  return out.length < MIN_CHUNKS ? { kind, text: out.join('') } : new ChunkedArtifact(kind, out);
}
