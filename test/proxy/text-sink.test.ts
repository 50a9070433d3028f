import { describe, expect, it } from 'vitest';
import { textArtifact } from '../../src/proxy/artifact.js';
import { TextSink } from '../../src/proxy/text-sink.js';

const lines = (n: number, tag: string) => Array.from({ length: n },
  (_, i) => `-A KUBE-SEP-${tag}${i} -j DNAT --to-destination 10.0.0.${i % 250}`);

function write(sink: TextSink, ls: readonly string[], expected = 0): string {
  sink.reset(expected);
  for (const l of ls) sink.line(l);
  return sink.text();
}

describe('text sink', () => {
  it('gives back exactly the lines written, on the first text and on reused memory', () => {
    const sink = new TextSink();
    const a = lines(1000, 'A');
    expect(write(sink, a)).toBe(`${a.join('\n')}\n`);
    const b = lines(700, 'B');
    expect(write(sink, b, 10)).toBe(`${b.join('\n')}\n`);
    expect(write(sink, [])).toBe('');
  });

  it('grows past a too small estimate and keeps every byte', () => {
    const sink = new TextSink();
    write(sink, ['x']);
    const big = lines(20_000, 'C');
    expect(write(sink, big, 16)).toBe(`${big.join('\n')}\n`);
  });

  it('keeps non-ASCII text intact in the buffer', () => {
    const sink = new TextSink();
    write(sink, ['first']);
    const text = ['-A X -m comment --comment "ñs/wéb:http"', 'plain', '€ 😀'];
    expect(write(sink, text)).toBe(`${text.join('\n')}\n`);
    expect(write(sink, ['ascii again'])).toBe('ascii again\n');
  });

  it('writes blocks as they are, in order with the lines around them', () => {
    const sink = new TextSink();
    for (const round of [1, 2]) {
      sink.reset();
      sink.line('*nat');
      sink.block('a\nb');
      sink.line(`c${round}`);
      sink.block('d');
      expect(sink.text()).toBe(`*nat\na\nb\nc${round}\nd\n`);
    }
  });

  it('hands a first text over as newline-ended pieces, later texts flat', () => {
    const sink = new TextSink();
    const a = lines(1000, 'A');
    sink.reset();
    for (const l of a.slice(0, 500)) sink.line(l);
    sink.block('x\ny');
    for (const l of a.slice(500)) sink.line(l);
    const pieces = sink.finish();
    expect(Array.isArray(pieces)).toBe(true);
    for (const p of pieces) expect(p.endsWith('\n')).toBe(true);
    const want = `${a.slice(0, 500).join('\n')}\nx\ny\n${a.slice(500).join('\n')}\n`;
    expect((pieces as string[]).join('')).toBe(want);
    sink.reset(10);
    sink.line('later');
    expect(sink.finish()).toBe('later\n');
  });

  it('makes a chunked artifact only of a large text, whose text is its pieces joined', () => {
    const sink = new TextSink();
    const big = lines(20_000, 'D');
    sink.reset();
    for (const l of big) sink.line(l);
    const art = textArtifact('nft', sink.finish());
    expect(art.chunks?.length).toBeGreaterThan(100);
    expect(art.text).toBe(`${big.join('\n')}\n`);
    expect(textArtifact('nft', ['a\n', 'b\n'])).toEqual({ kind: 'nft', text: 'a\nb\n' });
    expect(textArtifact('nft', 'c\n')).toEqual({ kind: 'nft', text: 'c\n' });
  });
});
