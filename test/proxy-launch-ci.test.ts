// docs/ci/github-actions-proxy.yml does what it says: its proxy step, run as GitHub Actions runs
// it (bash -eo pipefail, GITHUB_STEP_SUMMARY set) in an application's checkout with tmi-conform
// installed, runs the application's `npm test` through the proxy against a "staging tenant"
// (the reference), writes the HAR and the reports where the upload step takes them, and puts
// report.md in the job summary. (That the step fails on traffic that does not conform is the
// exit code of proxy -- CMD, tested in proxy-launch-command.test.ts.)
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startReference, type RunningReference } from '../reference/index.ts';
import { packageRoot } from '../core/paths.ts';
import { readJournal } from './helpers/proxy.ts';

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
}

const workflow = parse(readFileSync(join(packageRoot, 'docs', 'ci', 'github-actions-proxy.yml'), 'utf8')) as {
  jobs: Record<string, { env?: Record<string, string>; steps: Step[] }>;
};
const job = Object.values(workflow.jobs)[0]!;
const proxyStep = job.steps.find((s) => /tmi-conform proxy/.test(s.run ?? ''))!;
const upload = job.steps.find((s) => (s.uses ?? '').startsWith('actions/upload-artifact@'))!;

/**
 * The application's integration test: a token from the tenant's token endpoint and one read of
 * a resource server, both through the proxy (TMI_PROXY_ORIGIN, TMI_PROXY_URL).
 */
const INTEGRATION_TEST = `const env = process.env;
const token = await fetch(env.TMI_PROXY_ORIGIN + '/oauth/token/', {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ grant_type: 'client_credentials', client_id: env.STAGING_CLIENT_ID, client_secret: env.STAGING_CLIENT_SECRET, audience: env.STAGING + '/api/v2/' }),
}).then((r) => r.json());
const response = await fetch(env.TMI_PROXY_URL + '/resource-servers/' + env.RESOURCE_SERVER, { headers: { authorization: 'Bearer ' + token.access_token } });
await response.text();
if (response.status !== 200) { console.error('integration test failed: ' + response.status); process.exit(1); }
`;

const dir = mkdtempSync(join(tmpdir(), 'tmi-proxy-ci-'));
let ref: RunningReference;

beforeAll(async () => {
  ref = await startReference();
});

afterAll(async () => {
  await ref?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An application checkout with tmi-conform installed (linked from this one, as npm install of a folder does). */
function application(name: string): string {
  const app = join(dir, name);
  mkdirSync(join(app, 'node_modules', '.bin'), { recursive: true });
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name, private: true, type: 'module', scripts: { test: 'node integration.mjs' }, devDependencies: { 'tmi-conform': '*' } }),
  );
  writeFileSync(join(app, 'integration.mjs'), INTEGRATION_TEST);
  symlinkSync(packageRoot, join(app, 'node_modules', 'tmi-conform'), 'dir');
  symlinkSync(join('..', 'tmi-conform', 'bin', 'tmi-conform.js'), join(app, 'node_modules', '.bin', 'tmi-conform'));
  return app;
}

/** Runs the workflow's proxy step in `app` against `tenant`, as the runner does. */
async function runStep(app: string, tenant: RunningReference): Promise<{ code: number | null; stdout: string; stderr: string; summary: string }> {
  const summaryFile = join(app, 'step-summary.md');
  writeFileSync(summaryFile, '');
  const { client_id, client_secret } = tenant.clients.full;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    STAGING: tenant.origin,
    STAGING_CLIENT_ID: client_id,
    STAGING_CLIENT_SECRET: client_secret,
    RESOURCE_SERVER: tenant.fixtures.resource_servers[0]!,
    GITHUB_STEP_SUMMARY: summaryFile,
    // npx finds the installed bin; never the registry.
    npm_config_offline: 'true',
  };
  const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', proxyStep.run!], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr, summary: readFileSync(summaryFile, 'utf8') };
}

describe('docs/ci/github-actions-proxy.yml', () => {
  it('runs npm test through the proxy against the staging tenant, records it, writes the reports and the job summary; exit 0 when conforming', async () => {
    expect(proxyStep.run).toMatch(/^npx tmi-conform proxy --target "\$STAGING" .* -- npm test$/);
    expect(proxyStep.env).toMatchObject({ STAGING_CLIENT_SECRET: expect.stringContaining('secrets.') });
    const app = application('conforming-app');
    const { code, stderr, summary } = await runStep(app, ref);
    expect(code).toBe(0);
    expect(stderr).toMatch(/tmi-conform proxy: exit 0: npm exited with 0; the traffic is conforming under --fail-on must, which decides/);
    // What the upload step takes: the HAR, its journal and the four reports.
    const reports = join(app, String(upload.with!['path']));
    for (const file of ['traffic.har', 'traffic.har.jsonl', 'report.json', 'junit.xml', 'report.md', 'report.html'])
      expect(existsSync(join(reports, file)), file).toBe(true);
    const journal = readJournal(join(reports, 'traffic.har.jsonl'));
    expect(journal.map((e) => e._conformance.operation)).toEqual(['getToken', 'getResourceServer']);
    // The client secret the tests sent never reached the disk.
    expect(readFileSync(join(reports, 'traffic.har'), 'utf8')).not.toContain(ref.clients.full.client_secret);
    expect(summary).toContain('tmi-conform proxy');
    expect(summary).toBe(readFileSync(join(reports, 'report.md'), 'utf8'));
    expect(upload.if).toMatch(/!cancelled\(\)|always\(\)/);
  }, 60_000);
});
