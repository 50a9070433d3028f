import { describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import {
  formatLabelSelector, labelSelectorMatcher, matchesLabelSelector, matchesSelectorMap,
  parseLabelSelector,
} from '../../src/api/selectors.js';

function rejects(f: () => unknown): string {
  try { f(); } catch (e) {
    expect(isKdpError(e, 'KDP_BAD_REQUEST')).toBe(true);
    return (e as Error).message;
  }
  throw new Error('expected KDP_BAD_REQUEST');
}

describe('label selector strings', () => {
  it('parses every operator and matches as upstream', () => {
    const m = parseLabelSelector('a=b, c!=d,e in (x,y),!f,g,h==i,n>3,k notin (z)');
    expect(m.matches({ a: 'b', e: 'x', g: '', h: 'i', n: '4' })).toBe(true);
    expect(m.matches({ a: 'b', e: 'x', g: '', h: 'i', n: '4', f: '1' })).toBe(false);
    expect(m.matches({ a: 'b', e: 'z', g: '', h: 'i', n: '4' })).toBe(false);
    expect(m.matches({ a: 'b', c: 'd', e: 'x', g: '', h: 'i', n: '4' })).toBe(false);
    expect(m.matches({ a: 'b', e: 'x', g: '', h: 'i', n: '3' })).toBe(false);
    expect(m.matches({ a: 'b', e: 'x', g: '', h: 'i', n: '4', k: 'z' })).toBe(false);
  });
  it('matches everything when empty and treats != as true for absent labels', () => {
    expect(parseLabelSelector('').empty).toBe(true);
    expect(parseLabelSelector('').matches(undefined)).toBe(true);
    expect(parseLabelSelector('tier!=db').matches({})).toBe(true);
  });
  it('renders the canonical string sorted by key', () => {
    expect(parseLabelSelector('z=1,a in (y,x),!b').toString()).toBe('a in (x,y),!b,z=1');
  });
  it('accepts an empty value after =', () => {
    expect(parseLabelSelector('a=').matches({ a: '' })).toBe(true);
  });
  it('rejects garbage with KDP_BAD_REQUEST and a reason', () => {
    expect(rejects(() => parseLabelSelector('a=b=c'))).toContain("found '='");
    expect(rejects(() => parseLabelSelector('a in x'))).toContain("expected: '('");
    expect(rejects(() => parseLabelSelector('a in ()'))).toContain("values set can't be empty");
    expect(rejects(() => parseLabelSelector('a,'))).toContain('end of string');
    expect(rejects(() => parseLabelSelector('-bad-=x'))).toContain('invalid label key');
    expect(rejects(() => parseLabelSelector('a=b c'))).toContain("found 'c'");
    expect(rejects(() => parseLabelSelector('a=@@'))).toContain('invalid label value');
    expect(rejects(() => parseLabelSelector('n>x'))).toContain('integer');
  });
});

describe('LabelSelector objects', () => {
  it('combines matchLabels and matchExpressions', () => {
    const sel = { matchLabels: { app: 'web' },
      matchExpressions: [{ key: 'tier', operator: 'In' as const, values: ['a', 'b'] },
        { key: 'canary', operator: 'DoesNotExist' as const }] };
    expect(matchesLabelSelector(sel, { app: 'web', tier: 'a' })).toBe(true);
    expect(matchesLabelSelector(sel, { app: 'web', tier: 'a', canary: '1' })).toBe(false);
    expect(formatLabelSelector(sel)).toBe('app=web,!canary,tier in (a,b)');
  });
  it('matches nothing for null and everything for {}', () => {
    expect(matchesLabelSelector(null, { a: 'b' })).toBe(false);
    expect(matchesLabelSelector({}, { a: 'b' })).toBe(true);
    expect(labelSelectorMatcher(undefined).nothing).toBe(true);
  });
  it('rejects unknown operators', () => {
    const sel = { matchExpressions: [{ key: 'a', operator: 'Gt' as 'In', values: ['1'] }] };
    expect(rejects(() => labelSelectorMatcher(sel))).toContain('"Gt" is not a valid');
  });
  it('treats an empty Service selector map as matching nothing', () => {
    expect(matchesSelectorMap({}, { a: 'b' })).toBe(false);
    expect(matchesSelectorMap({ a: 'b' }, { a: 'b', c: 'd' })).toBe(true);
  });
});
