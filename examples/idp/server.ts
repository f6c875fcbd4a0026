/**
 * A demo OpenID provider for the example app (examples/web), on oidc-provider 9 (OpenID certified): the
 * authorization code flow with PKCE for one public client, `plant-store-web`; JWT access tokens (ES256) for the
 * Plant Store (resource `urn:plant-store`, audience `plant-store`, scopes `plants:read plants:write`); three demo
 * users on a sign-in page of its own; no consent page (the app is first-party); sign-out through end_session.
 * Mounted at the issuer's path behind a proxy (nginx's `/idp/`). A demo, never a production provider: accounts
 * live in this file, keys and sessions in memory, so a restart signs everyone out and changes the signing key
 * (the service fetches the new key set when it meets the new `kid`).
 *
 * Run by Node 24 as it is (type stripping): `node examples/idp/server.ts`. Environment: IDP_ISSUER (the URL
 * browsers and the service see, its path the mount point), APP_ORIGIN (where the app is served: its `/` is the
 * one redirect and post-logout URI), PORT, HOST.
 */
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

const ISSUER = process.env.IDP_ISSUER ?? 'http://localhost:8080/idp';
const APP_ORIGIN = process.env.APP_ORIGIN ?? new URL(ISSUER).origin;
const PORT = Number(process.env.PORT ?? '3001');
const HOST = process.env.HOST ?? '127.0.0.1';
const MOUNT = new URL(ISSUER).pathname.replace(/\/$/, '');

const CLIENT_ID = 'plant-store-web';
const RESOURCE = 'urn:plant-store';
const RESOURCE_SCOPES = 'plants:read plants:write';

/** Demo accounts: the account id is the token's `sub`, which the service can take as the tenant (TENANT_CLAIM=sub). */
const ACCOUNTS = new Map([
  ['alice', { name: 'Alice', org: 'greenhouse' }],
  ['bob', { name: 'Bob', org: 'greenhouse' }],
  ['carol', { name: 'Carol', org: 'allotment' }],
]);
const PASSWORD = 'plants';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** A page of this provider: no script and no inline style, so nginx's strict policy for /idp/ holds. */
const page = (title: string, body: string): string =>
  `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>` +
  `<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;

function signInPage(uid: string, problem?: { text: string; user: string }): string {
  const users = [...ACCOUNTS.keys()].map((id) => `<code>${id}</code>`).join(', ');
  return page(
    'Sign in to Plant Store',
    (problem === undefined ? '' : `<p id="idp-problem" role="alert">${escapeHtml(problem.text)}</p>`) +
      `<form id="idp-login" method="post" action="${MOUNT}/interaction/${encodeURIComponent(uid)}/login" autocomplete="off">` +
      `<p><label>User <input id="idp-username" name="username" required autofocus value="${escapeHtml(problem?.user ?? '')}"></label></p>` +
      '<p><label>Password <input id="idp-password" name="password" type="password" required></label></p>' +
      '<p><button type="submit">Sign in</button></p></form>' +
      `<p>Demo users: ${users}; the password is <code>${PASSWORD}</code>.</p>`,
  );
}

// One ES256 key, made at start: the service reads its public half from the JWKS (AUTH_JWKS_URL).
const signingKey = { ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'ES256', use: 'sig' };

const configuration: Configuration = {
  clients: [
    {
      client_id: CLIENT_ID,
      client_name: 'Plant Store',
      application_type: 'web',
      // A public client: a page has no secret to keep. PKCE (S256) is what binds the code to the page that asked.
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: [`${APP_ORIGIN}/`],
      post_logout_redirect_uris: [`${APP_ORIGIN}/`],
      id_token_signed_response_alg: 'ES256',
    },
  ],
  clientDefaults: { id_token_signed_response_alg: 'ES256' },
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  // An app served from another origin (a dev server) may call the token endpoint; nothing else may.
  clientBasedCORS: (_ctx, origin) => origin === APP_ORIGIN,
  pkce: { required: () => true },
  findAccount: (_ctx: KoaContextWithOIDC, sub: string) => {
    const account = ACCOUNTS.get(sub);
    return account === undefined ? undefined : { accountId: sub, claims: () => ({ sub, name: account.name }) };
  },
  // The access token's `org_id`: a team's shared store would set TENANT_CLAIM=org_id instead of sub.
  extraTokenClaims: (_ctx, token) => ('accountId' in token ? { org_id: ACCOUNTS.get(token.accountId)?.org } : undefined),
  // No consent page: the first-party app is granted openid and the store's scopes as the user signs in.
  loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
    const { client, session } = ctx.oidc;
    if (client === undefined || session === undefined || session.accountId === undefined) return undefined;
    const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
    if (grantId !== undefined) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
    grant.addOIDCScope('openid');
    grant.addResourceScope(RESOURCE, RESOURCE_SCOPES);
    await grant.save();
    return grant;
  },
  interactions: { url: (_ctx, interaction) => `${MOUNT}/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      // The app names no resource: every access token is for the store.
      defaultResource: (_ctx, _client, oneOf) => (oneOf === undefined || oneOf.includes(RESOURCE) ? RESOURCE : oneOf),
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        if (resource !== RESOURCE) throw new errors.InvalidTarget();
        return { scope: RESOURCE_SCOPES, audience: 'plant-store', accessTokenFormat: 'jwt', accessTokenTTL: 3600, jwt: { sign: { alg: 'ES256' } } };
      },
    },
    rpInitiatedLogout: {
      enabled: true,
      logoutSource: (ctx, form) => {
        ctx.body = page('Sign out of Plant Store?', `${form}<p><button id="idp-logout" type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button></p>`);
      },
      postLogoutSuccessSource: (ctx) => {
        ctx.body = page('Signed out', '<p>You are signed out of Plant Store.</p>');
      },
    },
  },
  renderError: (ctx, out) => {
    ctx.type = 'html';
    ctx.body = page('Sign-in failed', Object.entries(out).map(([key, value]) => `<p><strong>${escapeHtml(key)}</strong>: ${escapeHtml(String(value))}</p>`).join(''));
  },
};

const provider = new Provider(ISSUER, configuration);
// nginx in front: X-Forwarded-Proto and Host say how the browser reached it (secure cookies over https).
provider.proxy = true;

const app = express();
app.disable('x-powered-by');
app.use(`${MOUNT}/interaction`, (_req, res, next) => {
  res.set('Cache-Control', 'no-store');
  next();
});

app.get(`${MOUNT}/interaction/:uid`, async (req, res) => {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== req.params.uid || details.prompt.name !== 'login') {
    res.status(400).type('html').send(page('Sign-in failed', '<p>This sign-in cannot go on here; start again from the app.</p>'));
    return;
  }
  res.type('html').send(signInPage(details.uid));
});

app.post(`${MOUNT}/interaction/:uid/login`, express.urlencoded({ extended: false, limit: '4kb' }), async (req, res) => {
  const details = await provider.interactionDetails(req, res);
  const { username, password } = (req.body ?? {}) as { username?: unknown; password?: unknown };
  if (details.uid !== req.params.uid || details.prompt.name !== 'login') {
    res.status(400).type('html').send(page('Sign-in failed', '<p>This sign-in cannot go on here; start again from the app.</p>'));
    return;
  }
  if (typeof username !== 'string' || !ACCOUNTS.has(username) || password !== PASSWORD) {
    res.status(401).type('html').send(signInPage(details.uid, { text: 'Unknown user or wrong password.', user: typeof username === 'string' ? username : '' }));
    return;
  }
  await provider.interactionFinished(req, res, { login: { accountId: username } }, { mergeWithLastSubmission: false });
});

app.use(MOUNT, provider.callback());

// An expired or missing interaction (SessionNotFound) and anything else: a page, never a stack.
app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
  const known = error instanceof errors.OIDCProviderError;
  if (!known) console.error(error);
  res.status(known ? error.statusCode : 500).type('html').send(page('Sign-in failed', `<p>${escapeHtml(known ? error.error_description ?? error.message : 'Something went wrong.')} Start again from the app.</p>`));
});

const server = app.listen(PORT, HOST, () => {
  console.log(JSON.stringify({ msg: 'identity provider listening', issuer: ISSUER, app: APP_ORIGIN, host: HOST, port: PORT }));
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
