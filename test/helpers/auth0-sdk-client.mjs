// A program using the official auth0 SDK as an application would: ManagementClient with its
// default transport (no custom fetch), its domain set to the proxy's HOST:PORT, so every call
// goes to https://HOST:PORT. Run in its own process, because Node reads NODE_EXTRA_CA_CERTS
// (the proxy's CA) only at start. Gets a token, calls the three operations, and prints what it
// got as one JSON line. Input from the environment (SDK_*). Plain JavaScript: it starts as an
// application's process does, with nothing compiling it first.
import { ManagementClient } from 'auth0';

/** @param {string} name */
const env = (name) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const management = new ManagementClient({
  domain: env('SDK_DOMAIN'),
  clientId: env('SDK_CLIENT_ID'),
  clientSecret: env('SDK_CLIENT_SECRET'),
  // The tenant's own audience: the SDK would otherwise ask for https://{domain}/api/v2/, the proxy's address.
  audience: env('SDK_AUDIENCE'),
  maxRetries: 0,
});

const session = await management.sessions.update(env('SDK_SESSION_ID'), { session_metadata: { plan: 'platinum' } });
const resourceServer = await management.resourceServers.get(env('SDK_RESOURCE_SERVER_ID'));
const deleted = await management.tokenExchangeProfiles.delete(env('SDK_TOKEN_EXCHANGE_PROFILE_ID'));
process.stdout.write(
  JSON.stringify({ sessionMetadata: session.session_metadata, resourceServerName: resourceServer.name, deleted: deleted === undefined }) + '\n',
);
