/**
 * Signing in with the OpenID provider named at build time (VITE_OIDC_ISSUER): the authorization code flow with
 * PKCE through oauth4webapi, the app a public client. Tokens live in this page's memory only; nothing holding a
 * token is ever written to localStorage, sessionStorage or a cookie of this origin. What survives a reload is
 * the provider's own session (its cookie, on its path): a page without a token sends the browser to the provider
 * with `prompt=none`, which comes straight back with a code, or with `login_required` and the page shows
 * "Sign in". sessionStorage holds two things: the round trip's verifier, state and nonce (removed as the
 * browser returns), and a marker saying not to try silently, set when a silent try failed or the user signed
 * out, removed by the next sign-in; so a page never redirects in a loop.
 */
import * as oauth from 'oauth4webapi';

export type SignInConfig = { issuer: URL; clientId: string };

/** What a page knows of the user: the access token for the service, and the id token for signing out. */
export type Session = { accessToken: string; idToken: string | undefined; user: string };

export type SignInState = { kind: 'starting' } | { kind: 'redirecting' } | { kind: 'signed-in'; session: Session } | { kind: 'signed-out'; problem?: string };

/** The round trip's secrets, for the page the provider sends the browser back to. */
type Pending = { state: string; verifier: string; nonce: string; silent: boolean };

const PENDING = 'plant-store.sign-in';
const QUIET = 'plant-store.no-silent-sign-in';
const SCOPE = 'openid plants:read plants:write';

/** The provider this build signs in with, or none: then the app asks for a token instead. */
export function signInConfig(): SignInConfig | undefined {
  const issuer = import.meta.env.VITE_OIDC_ISSUER;
  if (issuer === undefined || issuer === '') return undefined;
  // A path ("/idp") is the provider on the page's own origin, as nginx serves it in the compose stack.
  return { issuer: new URL(issuer, window.location.origin), clientId: import.meta.env.VITE_OIDC_CLIENT_ID || 'plant-store-web' };
}

// The app's one address the provider sends the browser back to, registered with the client.
const redirectUri = (): string => `${window.location.origin}/`;

/** http is allowed for a provider on this machine or on the page's own origin (the demo stack), https elsewhere. */
function insecureAllowed(issuer: URL): boolean {
  return issuer.protocol === 'http:' && (issuer.origin === window.location.origin || ['localhost', '127.0.0.1', '[::1]'].includes(issuer.hostname));
}

async function discover(config: SignInConfig): Promise<oauth.AuthorizationServer> {
  const response = await oauth.discoveryRequest(config.issuer, { [oauth.allowInsecureRequests]: insecureAllowed(config.issuer) });
  return oauth.processDiscoveryResponse(config.issuer, response);
}

/** Sends the browser to the provider: its sign-in page, or with `silent` a check of its session only. */
export async function signIn(config: SignInConfig, silent = false): Promise<void> {
  const as = await discover(config);
  const pending: Pending = { state: oauth.generateRandomState(), verifier: oauth.generateRandomCodeVerifier(), nonce: oauth.generateRandomNonce(), silent };
  const url = new URL(as.authorization_endpoint ?? '');
  url.search = new URLSearchParams({
    client_id: config.clientId,
    redirect_uri: redirectUri(),
    response_type: 'code',
    scope: SCOPE,
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: 'S256',
    ...(silent ? { prompt: 'none' } : {}),
  }).toString();
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  window.location.assign(url);
}

/** Ends the provider's session too (end_session), so the next load does not sign in silently. */
export async function signOut(config: SignInConfig, session: Session): Promise<void> {
  sessionStorage.setItem(QUIET, '1');
  const as = await discover(config);
  const url = new URL(as.end_session_endpoint ?? '');
  url.search = new URLSearchParams({ client_id: config.clientId, post_logout_redirect_uri: redirectUri(), ...(session.idToken === undefined ? {} : { id_token_hint: session.idToken }) }).toString();
  window.location.assign(url);
}

/** The code the provider sent back, exchanged for tokens (the verifier proves this page asked for it). */
async function finish(config: SignInConfig, pending: Pending, back: URL): Promise<SignInState> {
  const as = await discover(config);
  const client: oauth.Client = { client_id: config.clientId };
  let parameters: URLSearchParams;
  try {
    parameters = oauth.validateAuthResponse(as, client, back, pending.state);
  } catch (error) {
    sessionStorage.setItem(QUIET, '1');
    // login_required (and its kin) after a silent try: simply not signed in at the provider.
    if (pending.silent && error instanceof oauth.AuthorizationResponseError) return { kind: 'signed-out' };
    throw error;
  }
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), parameters, redirectUri(), pending.verifier, {
    [oauth.allowInsecureRequests]: insecureAllowed(config.issuer),
  });
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: pending.nonce, requireIdToken: true });
  sessionStorage.removeItem(QUIET);
  const claims = oauth.getValidatedIdTokenClaims(tokens);
  return { kind: 'signed-in', session: { accessToken: tokens.access_token, idToken: tokens.id_token, user: claims?.sub ?? 'unknown' } };
}

async function start(config: SignInConfig): Promise<SignInState> {
  const back = new URL(window.location.href);
  const text = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  const pending = text === null ? undefined : (JSON.parse(text) as Pending);
  const returned = back.searchParams.has('code') || back.searchParams.has('error');
  if (returned) window.history.replaceState(null, '', '/');
  if (pending !== undefined && returned) {
    try {
      return await finish(config, pending, back);
    } catch (error) {
      sessionStorage.setItem(QUIET, '1');
      return { kind: 'signed-out', problem: `Signing in failed: ${(error as Error).message}` };
    }
  }
  // A round trip that never came back (the user went back, the provider was down): no silent retry.
  if (pending !== undefined || sessionStorage.getItem(QUIET) !== null) return { kind: 'signed-out' };
  try {
    await signIn(config, true);
    return { kind: 'redirecting' };
  } catch (error) {
    sessionStorage.setItem(QUIET, '1');
    return { kind: 'signed-out', problem: `The sign-in service could not be reached: ${(error as Error).message}` };
  }
}

let started: Promise<SignInState> | undefined;

/** Once per page load (React's StrictMode runs effects twice): the state the page starts in. */
export function startSignIn(config: SignInConfig): Promise<SignInState> {
  started ??= start(config);
  return started;
}
