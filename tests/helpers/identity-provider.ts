import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWK } from 'jose';

export const ISSUER = 'https://id.test.example/realms/plants';
export const AUDIENCE = 'plant-store';
export const ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;
export type Alg = (typeof ALGS)[number];

type KeyPair = { alg: Alg; kid: string; privateKey: CryptoKey; publicKey: CryptoKey; jwk: JWK };

export type Claims = Record<string, unknown>;

/**
 * How the JWKS URL answers: the key set; its headers, then a byte every 200 ms without end ('trickle'); or a
 * 32 MB body of white space before the key set ('huge').
 */
export type JwksAnswer = 'keys' | 'trickle' | 'huge';

export type IdentityProvider = {
  jwksUrl: string;
  /** How many times the JWKS was fetched. */
  fetches: () => number;
  /** A signed access token: valid for 5 minutes, both scopes, unless `claims` says otherwise (undefined removes a claim). */
  mint: (claims?: Claims, options?: { alg?: Alg; kid?: string; signWith?: string; header?: Claims }) => Promise<string>;
  /** A new key pair that is not published until `publish` names it. */
  addKey: (kid: string, alg?: Alg) => Promise<void>;
  publish: (...kids: string[]) => void;
  /** JWKs published as they are, after the keys named by publish: keys the service may not be able to use. */
  publishRaw: (...jwks: JWK[]) => void;
  answerWith: (answer: JwksAnswer) => void;
  /** Bytes of JWKS bodies written to connections so far (a client that hangs up stops the count). */
  bytesSent: () => number;
  /** PEM of a published key's public half: what an attacker could use as an HMAC secret. */
  publicPem: (kid: string) => Promise<string>;
  unsigned: (claims?: Claims) => string;
  env: () => Record<string, string>;
  /** Stops answering: the port is closed. */
  stop: () => Promise<void>;
};

const now = () => Math.floor(Date.now() / 1000);

export function claimsFor(overrides: Claims = {}): Claims {
  const claims: Claims = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'user-1',
    iat: now(),
    exp: now() + 300,
    scope: 'openid plants:read plants:write',
    ...overrides,
  };
  for (const key of Object.keys(claims)) if (claims[key] === undefined) delete claims[key];
  return claims;
}

/**
 * A local OpenID provider for tests: key pairs made with jose, the public halves served as a JWKS by node's
 * http server on 127.0.0.1, tokens minted per case. Keys start published, one per algorithm (kid = alg).
 */
export async function startIdentityProvider(): Promise<IdentityProvider> {
  const keys = new Map<string, KeyPair>();
  let published: string[] = [];
  let raw: JWK[] = [];
  let answer: JwksAnswer = 'keys';
  let fetches = 0;
  let bytesSent = 0;

  const addKey = async (kid: string, alg: Alg = 'ES256') => {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    keys.set(kid, { alg, kid, privateKey, publicKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } });
  };
  for (const alg of ALGS) await addKey(alg, alg);
  published = [...ALGS];

  const server = http.createServer((req, res) => {
    if (req.url !== '/jwks') {
      res.writeHead(404).end();
      return;
    }
    fetches += 1;
    const body = JSON.stringify({ keys: [...published.map((kid) => keys.get(kid)?.jwk), ...raw] });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (answer === 'keys') {
      bytesSent += body.length;
      res.end(body);
    } else if (answer === 'trickle') {
      const timer = setInterval(() => {
        if (res.write(' ')) bytesSent += 1;
      }, 200);
      res.on('close', () => clearInterval(timer));
    } else {
      void (async () => {
        const chunk = Buffer.alloc(64 * 1024, ' ');
        for (let left = 32 * 1024 * 1024; left > 0 && !res.destroyed; left -= chunk.length) {
          if (!res.write(chunk)) {
            await new Promise<void>((resolve) => {
              const done = () => {
                res.off('drain', done);
                res.off('close', done);
                resolve();
              };
              res.on('drain', done).on('close', done);
            });
          }
          if (!res.destroyed) bytesSent += chunk.length;
        }
        if (!res.destroyed) res.end(body);
      })();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;

  return {
    jwksUrl,
    fetches: () => fetches,
    mint: async (claims = {}, { alg = 'ES256', kid = alg, signWith = kid, header = {} } = {}) => {
      const key = keys.get(signWith);
      if (key === undefined) throw new Error(`no key ${signWith}`);
      // jose signs a token whose crit lists an extension only when told the extension is understood.
      const crit = Array.isArray(header.crit) ? Object.fromEntries(header.crit.map((name) => [String(name), true])) : undefined;
      return new SignJWT(claimsFor(claims)).setProtectedHeader({ alg, kid, typ: 'at+jwt', ...header }).sign(key.privateKey, { crit });
    },
    addKey,
    publish: (...kids) => {
      published = kids;
    },
    publishRaw: (...jwks) => {
      raw = jwks;
    },
    answerWith: (next) => {
      answer = next;
    },
    bytesSent: () => bytesSent,
    publicPem: async (kid) => exportSPKI(keys.get(kid)?.publicKey as CryptoKey),
    unsigned: (claims = {}) => new UnsecuredJWT(claimsFor(claims)).encode(),
    env: () => ({ AUTH_JWKS_URL: jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE }),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An HS256 token whose secret is the given text (the classic key-confusion attack uses the public key's PEM). */
export function hmacSigned(secret: string, claims: Claims = {}, kid = 'RS256'): Promise<string> {
  return new SignJWT(claimsFor(claims)).setProtectedHeader({ alg: 'HS256', kid }).sign(new TextEncoder().encode(secret));
}
