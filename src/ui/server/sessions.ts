// The web UI's credentials: one-time login links and the sessions they (or a pasted bearer
// token) open. Both live only in the API server's memory: a restart logs everyone out, and
// nothing secret is written to disk.
//
// Contract: a link is redeemed at most once and only before it expires; a session carries the
// identity that was authenticated when it was opened (the UI acts with that user's rights and
// no more). Both maps are bounded: past the bound the oldest entry is dropped.

import { randomBytes } from 'node:crypto';
import type { UserInfo } from '../../apiserver/pipeline-types.js';

export interface UiSessionOptions {
  /** How long a one-time link stays redeemable (default 10 minutes). */
  readonly linkTtlMs?: number;
  /** How long a session lasts (default 12 hours). */
  readonly sessionTtlMs?: number;
  /** Most links and sessions kept each (default 1000). */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

export interface UiSessions {
  /** A new one-time link token acting as `user`. */
  issueLink(user: UserInfo): { token: string; expiresAt: Date };
  /** The session the link opens; undefined when unknown, expired or already used. */
  redeemLink(token: string): string | undefined;
  /** A new session acting as `user`; returns its id (the cookie's value). */
  openSession(user: UserInfo): string;
  /** The user of a live session. */
  userOf(sessionId: string): UserInfo | undefined;
  closeSession(sessionId: string): void;
}

interface Entry { readonly user: UserInfo; readonly expires: number }

const secret = (): string => randomBytes(32).toString('base64url');

export function buildUiSessions(o: UiSessionOptions = {}): UiSessions {
  const linkTtl = o.linkTtlMs ?? 10 * 60_000;
  const sessionTtl = o.sessionTtlMs ?? 12 * 3600_000;
  const max = o.maxEntries ?? 1000;
  const now = o.now ?? Date.now;
  const links = new Map<string, Entry>();
  const sessions = new Map<string, Entry>();
  const put = (m: Map<string, Entry>, key: string, e: Entry) => {
    for (const [k, v] of m) if (v.expires <= now()) m.delete(k);
    while (m.size >= max) m.delete(m.keys().next().value!);
    m.set(key, e);
  };
  const live = (m: Map<string, Entry>, key: string): Entry | undefined => {
    const e = m.get(key);
    if (!e) return undefined;
    if (e.expires > now()) return e;
    m.delete(key);
    return undefined;
  };
  const openSession = (user: UserInfo): string => {
    const id = secret();
    put(sessions, id, { user, expires: now() + sessionTtl });
    return id;
  };
  return {
    issueLink(user) {
      const token = secret();
      const expires = now() + linkTtl;
      put(links, token, { user, expires });
      return { token, expiresAt: new Date(expires) };
    },
    redeemLink(token) {
      const e = live(links, token);
      links.delete(token);
      return e ? openSession(e.user) : undefined;
    },
    openSession,
    userOf: (id) => live(sessions, id)?.user,
    closeSession: (id) => { sessions.delete(id); },
  };
}
