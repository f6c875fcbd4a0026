/**
 * The demo OpenID provider (examples/idp/server.ts) as a child process, and the whole sign-in stack for the
 * browser suites: the example app built to sign in at `/idp`, the provider and the service behind the project's
 * nginx on one origin (as in the compose stack), and Chromium. The service checks the provider's JWTs through
 * AUTH_JWKS_URL on loopback, as it does in compose.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, reportPolicyViolations } from './browser';
import { startNginx } from './nginx';
import { freePort } from './ports';

const ROOT = path.resolve(__dirname, '..', '..');
export const DEMO_PASSWORD = 'plants';

export type OidcIdp = { issuer: string; jwksUrl: string; output: () => string; stop: () => Promise<void> };

/** Runs the provider on 127.0.0.1:port with the issuer browsers see (behind nginx); resolves once it listens. */
export async function startOidcIdp(port: number, issuer: string, appOrigin: string): Promise<OidcIdp> {
  // jest runs on the pinned Node 24, which strips the types of examples/idp/server.ts itself.
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'examples', 'idp', 'server.ts')], {
    env: { PATH: process.env.PATH, IDP_ISSUER: issuer, APP_ORIGIN: appOrigin, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the identity provider did not start in 20 s: ${output}`)), 20_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('"identity provider listening"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the identity provider exited (${code}): ${output}`));
    });
  });
  return {
    issuer,
    jwksUrl: `http://127.0.0.1:${port}${new URL(issuer).pathname}/jwks`,
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export type SignInStack = {
  origin: string;
  idp: OidcIdp;
  browser: Browser;
  /** Console errors, page errors and policy violations of every page `openApp` opened. */
  problems: string[];
  /** A new browser context: a person of their own (cookies and storage apart). */
  newPerson: () => Promise<BrowserContext>;
  close: () => Promise<void>;
};

/** What the service needs to accept the provider's access tokens. */
export const jwtEnv = (idp: OidcIdp): Record<string, string> => ({ AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: idp.issuer, AUTH_AUDIENCE: 'plant-store', TRUST_PROXY: '1' });

/**
 * Builds the app with VITE_OIDC_ISSUER=/idp, picks the proxy's and the provider's ports, starts the provider,
 * then the service (`startService`, given the JWT settings; it resolves with its port and its stop), then nginx.
 */
export async function startSignInStack(
  executablePath: string,
  startService: (env: Record<string, string>) => Promise<{ port: number; close: () => Promise<void> }>,
): Promise<SignInStack> {
  const webRoot = mkdtempSync(path.join(os.tmpdir(), 'plants-web-signin-'));
  await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn', '--outDir', webRoot, '--emptyOutDir'], {
    cwd: path.join(ROOT, 'examples', 'web'),
    env: { ...process.env, VITE_OIDC_ISSUER: '/idp' },
  });
  const [proxyPort, idpPort] = [await freePort(), await freePort()];
  const origin = `http://127.0.0.1:${proxyPort}`;
  const idp = await startOidcIdp(idpPort, `${origin}/idp`, origin);
  const service = await startService(jwtEnv(idp));
  const proxy = await startNginx(service.port, [], webRoot, { idpPort, port: proxyPort });
  const browser = await launchChromium(executablePath);
  const contexts: BrowserContext[] = [];
  return {
    origin,
    idp,
    browser,
    problems: [],
    newPerson: async () => {
      const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
      await reportPolicyViolations(context);
      contexts.push(context);
      return context;
    },
    close: async () => {
      for (const context of contexts) await context.close();
      await browser.close();
      await proxy.stop();
      await service.close();
      await idp.stop();
      rmSync(webRoot, { recursive: true, force: true });
    },
  };
}

/** Opens the app in a new tab of `context`, every console error and page error reported into `problems`. */
export async function openApp(stack: SignInStack, context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') stack.problems.push(message.text());
  });
  page.on('pageerror', (error) => stack.problems.push(error.message));
  await page.goto(`${stack.origin}/`);
  return page;
}

/**
 * On the app's "Sign in": through the provider's own page as `user`, back to the app, signed in with the list
 * live. Resolves with the address of the provider's page the user typed into.
 */
export async function signInThroughProvider(page: Page, user: string): Promise<string> {
  await page.locator('#sign-in-button').click();
  await page.locator('#idp-login').waitFor();
  const providerPage = page.url();
  await page.locator('#idp-username').fill(user);
  await page.locator('#idp-password').fill(DEMO_PASSWORD);
  await page.locator('#idp-login button[type=submit]').click();
  await page.locator('#user', { hasText: user }).waitFor();
  await page.locator('#live-status', { hasText: 'Live' }).waitFor();
  return providerPage;
}
