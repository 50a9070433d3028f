// Debian's system Chromium driven by playwright-core (no browser download): for the web UI's
// browser tests and benchmark. Missing Chromium skips a test, except under CI=true (.ci/run
// installs the `chromium` package), where it is a failure.

import { existsSync } from 'node:fs';
import type { Browser, BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.KDP_CHROMIUM ?? '/usr/bin/chromium';

/** Why browser tests cannot run here, or undefined when they can. */
export function chromiumMissing(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const why = `${CHROMIUM} is missing (apt-get install chromium)`;
  if (process.env.CI === 'true') throw new Error(`CI=true but ${why}`);
  return why;
}

/** Headless, no sandbox (tests run as root), no background traffic to the outside. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [
    '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ] });
}

/** A 1280×800 page context that trusts the cluster's self-signed CA. */
export function uiContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
}
