// POST /plants with a JWT bearer against the same run with a static token, for RS256 and ES256, verified
// against a JWKS this bench serves on 127.0.0.1 (fetched once per server). Two loads per algorithm: one token
// reused by every request, as a front end does (verified once, then remembered until its exp), and a new token
// on every request (more tokens than the service remembers, cycled, so each request is a signature check).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type autocannon from 'autocannon';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { alternate, createRequests, f0, failures, freshStore, measure, newId, row, ROUNDS, SECONDS, TABLE_HEAD, TOKEN, WARMUP_SECONDS, type SectionResult, throughputRatio } from './lib';

const ISSUER = 'https://id.bench.example/realms/plants';
const AUDIENCE = 'plant-store';
const ALGS = ['RS256', 'ES256'] as const;
type Alg = (typeof ALGS)[number];
// More than the 10,000 verified tokens the service remembers: cycled in order, each is evicted before its turn.
const DISTINCT_TOKENS = Number(process.env.BENCH_JWT_DISTINCT ?? 12_000);

type Provider = { env: Record<string, string>; mint: (alg: Alg, count: number) => Promise<string[]>; close: () => Promise<void> };

/** A JWKS with one RS256 and one ES256 key; tokens valid for an hour with plants:write, one jti each. */
async function identityProvider(): Promise<Provider> {
  const pairs = await Promise.all(ALGS.map((alg) => generateKeyPair(alg)));
  const jwks = { keys: await Promise.all(pairs.map(async ({ publicKey }, i) => ({ ...(await exportJWK(publicKey)), kid: ALGS[i], alg: ALGS[i], use: 'sig' }))) };
  const now = Math.floor(Date.now() / 1000);
  const mint = async (alg: Alg, count: number) => {
    const key = pairs[ALGS.indexOf(alg)]?.privateKey as CryptoKey;
    const tokens: string[] = [];
    for (let i = 0; i < count; i += 1) {
      tokens.push(
        await new SignJWT({ scope: 'openid plants:read plants:write', jti: `bench-${i}` })
          .setProtectedHeader({ alg, kid: alg, typ: 'at+jwt' })
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .setSubject('bench-user')
          .setIssuedAt(now)
          .setExpirationTime(now + 3600)
          .sign(key),
      );
    }
    return tokens;
  };
  const server = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(jwks)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    env: { AUTH_JWKS_URL: `http://127.0.0.1:${port}/jwks`, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE },
    mint,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** POST /plants with a new id and the next token of the pool on every request. */
function rotatingTokens(tokens: string[]): autocannon.Request[] {
  let next = 0;
  return [
    {
      method: 'POST',
      path: '/plants',
      setupRequest: (request) => {
        const id = newId();
        next = (next + 1) % tokens.length;
        return {
          ...request,
          headers: { authorization: `Bearer ${tokens[next]}`, 'content-type': 'application/json' },
          body: `{"id":${id},"name":"Monstera ${id}","tag":"bench"}`,
        };
      },
    },
  ];
}

export async function jwtSection(): Promise<SectionResult> {
  const idp = await identityProvider();
  try {
    console.error(`minting ${DISTINCT_TOKENS} tokens per algorithm…`);
    const pools = { RS256: await idp.mint('RS256', DISTINCT_TOKENS), ES256: await idp.mint('ES256', DISTINCT_TOKENS) };
    // The same server configuration for every load: OIDC on, the static token accepted too.
    const run = (name: string, requests: autocannon.Request[]) => () => measure('service', freshStore(`jwt-${name}`), { env: idp.env, requests });
    const { medians: m, runs } = await alternate({
      static: run('static', createRequests(TOKEN)),
      rs256: run('rs256', createRequests(pools.RS256[0])),
      es256: run('es256', createRequests(pools.ES256[0])),
      rs256New: run('rs256-new', rotatingTokens(pools.RS256)),
      es256New: run('es256-new', rotatingTokens(pools.ES256)),
    });
    const lines = [
      `### Creates with a JWT bearer (POST /plants): RS256 and ES256 against a static token, ${SECONDS} s after ${WARMUP_SECONDS} s warm-up; medians of ${ROUNDS} alternating rounds`,
      '',
      ...TABLE_HEAD,
      row('service, static token', m.static),
      row('service, RS256 JWT, one token reused (verified once)', m.rs256),
      row('service, ES256 JWT, one token reused (verified once)', m.es256),
      row(`service, RS256 JWT, a new token each request (${f0(DISTINCT_TOKENS)} cycled)`, m.rs256New),
      row(`service, ES256 JWT, a new token each request (${f0(DISTINCT_TOKENS)} cycled)`, m.es256New),
      '',
      '| ratio | value | goal |',
      '|---|---:|---|',
      `| RS256 JWT reused / static token throughput | ${throughputRatio(runs.rs256, runs.static)} | ≥ 0.90 |`,
      `| ES256 JWT reused / static token throughput | ${throughputRatio(runs.es256, runs.static)} | ≥ 0.90 |`,
      `| RS256 JWT new each request / static token throughput | ${throughputRatio(runs.rs256New, runs.static)} | ≥ 0.90 |`,
      `| ES256 JWT new each request / static token throughput | ${throughputRatio(runs.es256New, runs.static)} | ≥ 0.90 |`,
      '',
    ];
    return { lines, failed: failures(...Object.values(runs).flat()) };
  } finally {
    await idp.close();
  }
}
