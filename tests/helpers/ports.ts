import net from 'node:net';

/**
 * A port free on 127.0.0.1 a moment ago, for a process that must be told its port before it starts (nginx, the
 * built server's metrics listener). Another process could take it in between; everything that can listen on
 * port 0 does so instead.
 */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
