// A forwarder that puts a target farther away: each request reaches the target half the added
// round trip late, and its answer reaches the client the other half late, as with a tenant tens
// of milliseconds away. Bodies are buffered whole (the kit's are small). Listens on a free
// loopback port; keeps connections to the target alive.
import { Agent, createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DelayForwarder {
  /** Where to send requests: http://127.0.0.1:PORT, standing for the target's origin. */
  origin: string;
  close(): Promise<void>;
}

/** Hop-by-hop headers: they describe one connection, not the message. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade']);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const kept: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name)) kept[name] = value;
  return kept;
}

export async function startDelayForwarder(targetOrigin: string, roundTripMs: number): Promise<DelayForwarder> {
  const target = new URL(targetOrigin);
  const agent = new Agent({ keepAlive: true });
  const halfMs = roundTripMs / 2;
  const server = createServer((incoming, outgoing) => {
    const body: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => body.push(chunk));
    incoming.on('end', () => {
      setTimeout(() => {
        const upstream = request(
          { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: endToEnd(incoming.headers), agent },
          (answer) => {
            const answerBody: Buffer[] = [];
            answer.on('data', (chunk: Buffer) => answerBody.push(chunk));
            answer.on('end', () =>
              setTimeout(() => outgoing.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers)).end(Buffer.concat(answerBody)), halfMs),
            );
          },
        );
        upstream.on('error', () => {
          if (!outgoing.headersSent) outgoing.writeHead(502).end();
        });
        upstream.end(Buffer.concat(body));
      }, halfMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}
