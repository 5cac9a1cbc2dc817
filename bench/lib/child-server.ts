// The benchmark's own servers, each run as a child process of it (so that each has a process,
// and CPU, of its own):
//   stub               the stub target: answers the three operations without verifying tokens
//   bare TARGET        (b) a bare http-proxy in front of TARGET (same keep-alive pool settings)
//   bare-tls TARGET CERT KEY  (f) the same behind an HTTPS listener presenting CERT (PEM files)
//   forwarding TARGET  (e) tmi-conform's forwarding alone: proxy/forward/server.ts, bodies captured, flows dropped
// Each prints "listening on ORIGIN" once ready and exits normally on SIGTERM (so that
// `node --cpu-prof` writes its profile).
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

const [role, target, certFile, keyFile] = process.argv.slice(2);

if (role === 'stub') {
  const { startStubTarget } = await import('../../fixtures/stub-target.ts');
  const stub = await startStubTarget();
  process.stdout.write(`listening on ${stub.origin}\n`);
} else if (role === 'bare') {
  serve(createServer(await bareProxy(target!)));
} else if (role === 'bare-tls') {
  serve(createTlsServer({ cert: readFileSync(certFile!), key: readFileSync(keyFile!) }, await bareProxy(target!)), 'https');
} else if (role === 'forwarding') {
  const { ProxyServer } = await import('../../proxy/forward/server.ts');
  const { parseTarget } = await import('../../proxy/forward/target.ts');
  serve(new ProxyServer({ target: parseTarget(target!), maxBodyBytes: 1024 * 1024, upstreamTimeoutMs: 30_000, onFlowDone: () => {} }).server);
} else {
  console.error(`child-server: unknown role "${role}" (stub, bare TARGET, bare-tls TARGET CERT KEY, forwarding TARGET)`);
  process.exit(2);
}

/** http-proxy in front of `target` with a keep-alive pool, as the request handler of a listener. */
async function bareProxy(target: string): Promise<(req: IncomingMessage, res: ServerResponse) => void> {
  const { default: httpProxy } = await import('http-proxy');
  const { Agent } = await import('node:http');
  const proxy = httpProxy.createProxyServer({ target, agent: new Agent({ keepAlive: true, timeout: 30_000, scheduling: 'lifo' }) });
  proxy.on('error', (_error, _req, res) => {
    if ('writeHead' in res && !res.headersSent) res.writeHead(502).end();
  });
  return (req, res) => proxy.web(req, res);
}

function serve(server: Server, scheme = 'http'): void {
  server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on ${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
  process.once('SIGTERM', () => process.exit(0));
}
