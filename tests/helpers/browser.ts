import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/**
 * Debian's Chromium under playwright-core (never a downloaded browser). The flags keep it off the network this
 * machine does not have: without --disable-background-networking it dials Google's hosts at every start.
 */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}

/**
 * Every Content-Security-Policy violation in the context's pages becomes a console error naming the directive
 * and what it blocked, so a test's console listener sees a policy that breaks the page, report-only or not.
 */
export async function reportPolicyViolations(context: BrowserContext): Promise<void> {
  // A string: these tests compile without the DOM library. Injected before the page's scripts, outside its policy.
  await context.addInitScript(`document.addEventListener('securitypolicyviolation', (event) => {
    console.error('CSP violation: ' + event.effectiveDirective + ' blocked ' + (event.blockedURI || 'inline') + ' (' + event.sourceFile + ':' + event.lineNumber + ')');
  });`);
}
