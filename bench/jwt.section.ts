// POST /plants with a JWT bearer against the same run with a static token: RS256 and ES256 access tokens,
// verified against a JWKS this bench serves on 127.0.0.1 (fetched once, then a cached key: a signature check).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { alternate, createRequests, f2, failures, freshStore, measure, row, ROUNDS, SECONDS, TABLE_HEAD, TOKEN, WARMUP_SECONDS, type SectionResult } from './lib';

const ISSUER = 'https://id.bench.example/realms/plants';
const AUDIENCE = 'plant-store';

/** A JWKS with one RS256 and one ES256 key, and a token signed by each: valid for an hour, plants:write. */
async function identityProvider(): Promise<{ env: Record<string, string>; tokens: Record<'RS256' | 'ES256', string>; close: () => Promise<void> }> {
  const algs = ['RS256', 'ES256'] as const;
  const pairs = await Promise.all(algs.map((alg) => generateKeyPair(alg)));
  const jwks = { keys: await Promise.all(pairs.map(async ({ publicKey }, i) => ({ ...(await exportJWK(publicKey)), kid: algs[i], alg: algs[i], use: 'sig' }))) };
  const now = Math.floor(Date.now() / 1000);
  const sign = (i: number) =>
    new SignJWT({ scope: 'openid plants:read plants:write' })
      .setProtectedHeader({ alg: algs[i] ?? 'ES256', kid: algs[i], typ: 'at+jwt' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject('bench-user')
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(pairs[i]?.privateKey as CryptoKey);
  const server = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(jwks)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    env: { AUTH_JWKS_URL: `http://127.0.0.1:${port}/jwks`, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE },
    tokens: { RS256: await sign(0), ES256: await sign(1) },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function jwtSection(): Promise<SectionResult> {
  const idp = await identityProvider();
  try {
    // The same server configuration for all three: OIDC on, the static token accepted too.
    const { medians, runs } = await alternate({
      static: () => measure('service', freshStore('jwt-static'), { env: idp.env, requests: createRequests(TOKEN) }),
      rs256: () => measure('service', freshStore('jwt-rs256'), { env: idp.env, requests: createRequests(idp.tokens.RS256) }),
      es256: () => measure('service', freshStore('jwt-es256'), { env: idp.env, requests: createRequests(idp.tokens.ES256) }),
    });
    const lines = [
      `### Creates with a JWT bearer (POST /plants): RS256 and ES256 against a static token, ${SECONDS} s after ${WARMUP_SECONDS} s warm-up; medians of ${ROUNDS} alternating rounds`,
      '',
      ...TABLE_HEAD,
      row('service, static token', medians.static),
      row('service, RS256 JWT (cached JWKS key)', medians.rs256),
      row('service, ES256 JWT (cached JWKS key)', medians.es256),
      '',
      '| ratio | value | goal |',
      '|---|---:|---|',
      `| RS256 JWT / static token throughput | ${f2(medians.rs256.rps / medians.static.rps)} | ≥ 0.90 |`,
      `| ES256 JWT / static token throughput | ${f2(medians.es256.rps / medians.static.rps)} | ≥ 0.90 |`,
      '',
    ];
    return { lines, failed: failures(...runs.static, ...runs.rs256, ...runs.es256) };
  } finally {
    await idp.close();
  }
}
