// `tmi-conform serve`: the reference implementation alone, for trying the kit (or the proxy)
// against something. Runs until SIGINT or SIGTERM, then closes and exits 0.
import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import {
  FAULTS,
  FAULT_NAMES,
  isFaultName,
  isPublicUrl,
  isTenantDomain,
  parseRateLimit,
  startReference,
  type RunningReference,
  type StartReferenceOptions,
} from '../reference/index.ts';
import { parseArgs, parseListen, stringFlag, type ParsedArgs } from './args.ts';
import { EXIT_OK, UsageError } from '../core/errors.ts';
import { watchLauncher } from './launcher.ts';
import { stopSignal } from './signals.ts';

const DEFAULT_LISTEN = '127.0.0.1:4010';

export const help = `Usage: tmi-conform serve [--listen HOST:PORT] [--config-out FILE] [--fault NAME]...
                         [--rate-limit N/SECONDS|off] [--tenant-domain DOMAIN] [--public-url URL] [--list-faults]

Starts the reference implementation (a conforming in-memory tenant with a token endpoint)
alone, prints its base URL and the demo client credentials, and serves until interrupted
(Ctrl-C or SIGTERM, or its launcher such as npx or sh -c goes away), then exits 0. Its data
is seeded fresh at every start.

Options:
  --listen HOST:PORT     where to listen (default ${DEFAULT_LISTEN}; port 0 = a free port)
  --config-out FILE      write a config file that "tmi-conform run --config FILE" accepts as is
                         (it holds the demo client secrets)
  --fault NAME           switch on a deliberate non-conformity (repeatable); see --list-faults
  --rate-limit N/SECONDS requests per client per window (default 1000/10); "off" disables it
  --tenant-domain DOMAIN also accept the audience https://DOMAIN/api/v2/ (for unmodified SDKs)
  --public-url URL       its canonical public URL, as behind a gateway or a custom domain: tokens carry
                         the issuer URL/ and are issued for the API identifier URL/api/v2/ (the audience),
                         and the discovery document says so, whatever address it listens on
  --list-faults          print the fault names and the requirement each breaks, then exit

Prints "listening on http://HOST:PORT" once ready.`;

export interface ServeControl {
  /** Resolves when the server should stop; default: the first SIGINT or SIGTERM. */
  stopped?: Promise<unknown>;
  out?: (text: string) => void;
}

export async function run(argv: string[], control: ServeControl = {}): Promise<number> {
  const out = control.out ?? writeStdout;
  const args = parseArgs('serve', argv, {
    listen: { value: true },
    'config-out': { value: true },
    fault: { value: true, repeat: true },
    'rate-limit': { value: true },
    'tenant-domain': { value: true },
    'public-url': { value: true },
    'list-faults': { value: false },
  });
  if (args.positionals.length > 0) throw new UsageError(`serve: unexpected argument "${args.positionals[0]}"`);
  if (args.flags['list-faults'] === true) {
    const width = Math.max(...FAULT_NAMES.map((n) => n.length));
    for (const name of FAULT_NAMES) out(`${name.padEnd(width)}  ${FAULTS[name]!.requirement.padEnd(34)} ${FAULTS[name]!.description}\n`);
    return EXIT_OK;
  }

  const options = referenceOptions(args);
  const { host, port } = options;
  const configOut = stringFlag(args, 'config-out');

  // Listen for signals before starting, so an early Ctrl-C is not lost. A launcher that goes
  // away (npx, npm exec or sh -c killed by SIGTERM) stops it the same way.
  const signal = control.stopped ? undefined : stopSignal();
  const launcher = control.stopped ? undefined : watchLauncher();
  const stopped = control.stopped ?? Promise.race([signal!.promise, launcher!.gone.then((pid) => out(`its launcher (pid ${pid}) went away\n`))]);
  let ref: RunningReference;
  try {
    ref = await startReference(options);
  } catch (error) {
    signal?.dispose();
    launcher?.dispose();
    throw new UsageError(`serve: ${startFailure(error, host, port)}`);
  }
  try {
    if (configOut !== undefined) await writeConfig(configOut, ref);
    out(describe(ref, configOut));
    await stopped;
    out('stopping\n');
  } finally {
    signal?.dispose();
    launcher?.dispose();
    await ref.close();
  }
  return EXIT_OK;
}

/** --listen, --fault, --rate-limit, --tenant-domain and --public-url: how to start the reference. */
function referenceOptions(args: ParsedArgs): StartReferenceOptions & { host: string; port: number } {
  const { host, port } = parseListen('serve', stringFlag(args, 'listen') ?? DEFAULT_LISTEN);
  const faults = (args.flags['fault'] as string[] | undefined) ?? [];
  const unknown = faults.filter((f) => !isFaultName(f));
  if (unknown.length > 0)
    throw new UsageError(`serve: unknown fault ${unknown.map((f) => JSON.stringify(f)).join(', ')} (tmi-conform serve --list-faults lists them)`);
  const options: StartReferenceOptions & { host: string; port: number } = { host, port, faults };
  const rateLimit = stringFlag(args, 'rate-limit');
  if (rateLimit !== undefined) {
    if (rateLimit === 'off') options.rateLimit = false;
    else {
      const parsed = parseRateLimit(rateLimit);
      if (!parsed) throw new UsageError(`serve: --rate-limit expects N/SECONDS (e.g. 1000/10) or "off", got "${rateLimit}"`);
      options.rateLimit = parsed;
    }
  }
  const tenantDomain = stringFlag(args, 'tenant-domain');
  if (tenantDomain !== undefined) {
    if (!isTenantDomain(tenantDomain))
      throw new UsageError(`serve: --tenant-domain expects a bare host name such as tenant.example.com, got "${tenantDomain}"`);
    options.tenantDomain = tenantDomain;
  }
  const publicUrl = stringFlag(args, 'public-url');
  if (publicUrl !== undefined) {
    if (!isPublicUrl(publicUrl))
      throw new UsageError(`serve: --public-url expects an http(s) URL without a path such as https://tenant.example.com, got "${publicUrl}"`);
    options.publicUrl = publicUrl;
  }
  return options;
}

/** --config-out: a configuration for `tmi-conform run` against the reference (mode 0600: it holds the demo clients' secrets). */
async function writeConfig(configOut: string, ref: RunningReference): Promise<void> {
  const header = '# tmi-conform config for the reference started by "tmi-conform serve".\n# Holds demo client secrets, valid only while that server runs.\n';
  try {
    await writeFile(configOut, header + stringify(ref.config()), { mode: 0o600 });
  } catch (error) {
    throw new UsageError(`serve: cannot write ${configOut}: ${(error as Error).message}`);
  }
}

/** stdout closed early (e.g. piped into head) is not an error worth a stack trace. */
function writeStdout(text: string): void {
  if (process.stdout.listenerCount('error') === 0) {
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
  process.stdout.write(text);
}

function startFailure(error: unknown, host: string, port: number): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return `cannot listen on ${host}:${port}: the address is in use (try --listen ${host}:0)`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `cannot listen on ${host}:${port}: no such local address`;
  if (code === 'EACCES') return `cannot listen on ${host}:${port}: permission denied`;
  return (error as Error).message;
}

function describe(ref: RunningReference, configOut: string | undefined): string {
  const lines = [
    `listening on ${ref.origin}`,
    `base_url   ${ref.baseUrl}`,
    `auth_url   ${ref.authUrl}   (token endpoint ${ref.authUrl}/oauth/token/)`,
    `audience   ${ref.audience}`,
    `issuer     ${ref.issuer}`,
    'demo clients (client credentials):',
    ...Object.entries(ref.clients).map(([profile, c]) => `  ${profile.padEnd(11)} client_id=${c.client_id}  client_secret=${c.client_secret}`),
    `fixtures   sessions: ${ref.fixtures.sessions.join(', ')}`,
    `           resource_servers: ${ref.fixtures.resource_servers.join(', ')}`,
    `           token_exchange_profiles: ${ref.fixtures.token_exchange_profiles.join(', ')}`,
    `rate limit ${ref.rateLimit === false ? 'off' : `${ref.rateLimit.limit} requests per ${ref.rateLimit.windowSeconds} s per client`}`,
  ];
  if (ref.faults.length > 0) lines.push(`faults on  ${ref.faults.join(', ')} (NOT conforming)`);
  if (configOut !== undefined) lines.push(`config     written to ${configOut}`);
  lines.push('Ctrl-C to stop');
  return lines.join('\n') + '\n';
}
