import { describe, expect, it } from 'vitest';
import { buildUiSessions } from '../../src/ui/server/sessions.js';

const alice = { name: 'alice', groups: ['system:authenticated'] };

describe('web UI sessions and one-time links', () => {
  it('a link opens one session as its user, and only once', () => {
    const s = buildUiSessions();
    const { token } = s.issueLink(alice);
    const id = s.redeemLink(token);
    expect(id).toBeDefined();
    expect(s.userOf(id!)).toEqual(alice);
    expect(s.redeemLink(token)).toBeUndefined();
  });

  it('an expired link opens nothing and an expired session is gone', () => {
    let now = 1_000;
    const s = buildUiSessions({ now: () => now, linkTtlMs: 100, sessionTtlMs: 1000 });
    const late = s.issueLink(alice).token;
    const id = s.redeemLink(s.issueLink(alice).token)!;
    now += 101;
    expect(s.redeemLink(late)).toBeUndefined();
    expect(s.userOf(id)).toEqual(alice);
    now += 1000;
    expect(s.userOf(id)).toBeUndefined();
  });

  it('unknown tokens and sessions are refused; closing a session ends it', () => {
    const s = buildUiSessions();
    expect(s.redeemLink('nope')).toBeUndefined();
    expect(s.userOf('nope')).toBeUndefined();
    const id = s.openSession(alice);
    s.closeSession(id);
    expect(s.userOf(id)).toBeUndefined();
  });

  it('keeps at most maxEntries links, dropping the oldest', () => {
    const s = buildUiSessions({ maxEntries: 2 });
    const first = s.issueLink(alice).token;
    s.issueLink(alice);
    s.issueLink(alice);
    expect(s.redeemLink(first)).toBeUndefined();
  });
});
