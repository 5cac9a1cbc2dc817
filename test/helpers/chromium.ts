// The system Chromium (Debian's package), never a browser a tool downloads: the report tests
// open report.html in it headless.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export function findChromium(): string | undefined {
  const candidates = [process.env['CHROMIUM_PATH'], '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  for (const path of candidates) if (path && existsSync(path)) return path;
  try {
    return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Arguments for headless Chromium in a container (no sandbox, no GPU). */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu'];
