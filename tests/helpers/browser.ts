import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium under playwright-core (never a downloaded browser). The flags keep it off the network this
 * machine does not have: without --disable-background-networking it dials Google's hosts at every start.
 */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}
