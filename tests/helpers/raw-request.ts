import http from 'node:http';

export type RawResponse = { status: number; headers: http.IncomingHttpHeaders; body: unknown };

/** One request with exactly these headers and bytes: no client adds a Content-Type or re-encodes the body. */
export function rawRequest(
  baseUrl: string,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: Buffer | string; localAddress?: string; /** Fails the request when no answer has come by then. */ timeoutMs?: number },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${baseUrl}${options.path ?? '/plants'}`, { method: options.method ?? 'POST', headers: options.headers, localAddress: options.localAddress }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) });
      });
    });
    request.on('error', reject);
    if (options.timeoutMs !== undefined) request.setTimeout(options.timeoutMs, () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    request.end(options.body);
  });
}
