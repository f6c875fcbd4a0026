import type supertest from 'supertest';
import { uniqueId } from './plants';
import { bearer, type TestApp } from './test-app';

/** The Idempotency-Key suites' requests (tests/api/idempotency-key*.test.ts): a write, with a key when given one. */
type Method = 'post' | 'put' | 'patch' | 'delete';
export const send = (target: TestApp | supertest.Agent, method: Method, path: string, body: unknown, key?: string, headers: Record<string, string> = {}) => {
  const agent = 'request' in target ? target.request : target;
  const request = agent[method](path).set({ 'Content-Type': 'application/json', ...bearer(), ...(key === undefined ? {} : { 'Idempotency-Key': key }), ...headers });
  return body === undefined ? request : request.send(JSON.stringify(body));
};

/** What a replay repeats byte for byte. */
export const answer = (response: { status: number; text: string; headers: Record<string, string> }) => ({
  status: response.status,
  text: response.text,
  etag: response.headers.etag,
  location: response.headers.location,
});

export const aKey = () => `key-${uniqueId()}`;
