// A TCP proxy in front of lockd that can make the next request's outcome unknown to the client:
// `drop` forwards the request, then closes the client's connection as the answer arrives;
// `503` forwards the request, then answers 503 instead of lockd's answer. `cut()` cuts lockd off
// (every connection closed, new ones closed at once) until `restore()`.
import net from 'node:net';

export async function startProxy(target) {
  const { hostname, port } = new URL(target);
  let fault = null;
  const sockets = new Set();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const mode = fault;
    fault = null;
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client); sockets.add(upstream);
    client.on('close', () => { sockets.delete(client); upstream.destroy(); });
    upstream.on('close', () => { sockets.delete(upstream); client.destroy(); });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    if (mode === null) {
      upstream.pipe(client);
      return;
    }
    upstream.once('data', () => {
      proxy.faults.push(mode);
      if (mode === 'drop') {
        client.destroy();
      } else {
        client.end('HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/problem+json\r\n' +
          'content-length: 2\r\nconnection: close\r\n\r\n{}');
      }
      upstream.destroy();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const proxy = {
    base: `http://127.0.0.1:${server.address().port}`,
    faults: [],
    /** The next connection gets `mode` ('drop' or '503') for its first answer. */
    failNext(mode) { fault = mode; },
    /** Cuts lockd off: open connections are closed, and new ones closed at once. */
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() { cut = false; },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  return proxy;
}
