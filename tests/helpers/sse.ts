import http from 'node:http';

/** One server-sent event as a reader sees it; `comment` for a line starting with `:`. */
export type SseEvent = { event?: string; id?: string; data?: string; comment?: string };

export type SseStream = {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Events and comments in arrival order. */
  events: SseEvent[];
  /** The body of a non-200 answer, parsed as JSON. */
  body?: unknown;
  ended: Promise<void>;
  /** Resolves once `predicate` holds for the events so far; rejects after timeoutMs. */
  waitFor: (predicate: (events: SseEvent[]) => boolean, timeoutMs?: number) => Promise<SseEvent[]>;
  /** Only the events a reader dispatches (those with data): no comments, no id-only block. */
  named: () => SseEvent[];
  response: http.IncomingMessage;
  close: () => void;
};

/**
 * GET a text/event-stream with exactly these headers and parse it as the WHATWG format says (fields per line,
 * events ended by a blank line): the test's own reader, beside the `eventsource` package as an independent one.
 */
export function openStream(baseUrl: string, path: string, headers: Record<string, string>): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${baseUrl}${path}`, { headers }, (response) => {
      const events: SseEvent[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let current: SseEvent = {};
      let endedResolve: () => void = () => undefined;
      const ended = new Promise<void>((done) => (endedResolve = done));
      const notify = () => {
        for (const waiter of [...waiters]) waiter();
      };
      const stream: SseStream = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        events,
        ended,
        response,
        named: () => events.filter((event) => event.data !== undefined),
        close: () => request.destroy(),
        waitFor: (predicate, timeoutMs = 5000) =>
          new Promise((done, fail) => {
            const check = () => {
              if (!predicate(events)) return false;
              waiters.delete(check);
              clearTimeout(timer);
              done(events);
              return true;
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`stream: condition not met within ${timeoutMs} ms; events: ${JSON.stringify(events)}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          }),
      };
      response.setEncoding('utf8');
      if (response.statusCode !== 200) {
        let text = '';
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          stream.body = text === '' ? undefined : JSON.parse(text);
          endedResolve();
          resolve(stream);
        });
        return;
      }
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let newline: number;
        while ((newline = buffer.indexOf('\n')) !== -1) {
          const line = buffer.slice(0, newline).replace(/\r$/, '');
          buffer = buffer.slice(newline + 1);
          if (line === '') {
            if (Object.keys(current).length > 0) events.push(current);
            current = {};
          } else if (line.startsWith(':')) {
            events.push({ comment: line.slice(1) });
          } else {
            const colon = line.indexOf(':');
            const field = colon === -1 ? line : line.slice(0, colon);
            const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event' || field === 'id') current[field] = value;
            else if (field === 'data') current.data = current.data === undefined ? value : `${current.data}\n${value}`;
          }
        }
        notify();
      });
      const finish = () => {
        endedResolve();
        notify();
      };
      response.on('end', finish);
      response.on('close', finish);
      resolve(stream);
    });
    request.on('error', reject);
  });
}
