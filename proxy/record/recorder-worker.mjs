// Entry of the recorder thread. A worker thread does not inherit the loader of the thread that
// starts it: in dist/ (the compiled kit, scripts/compiled.mjs) the recorder is JavaScript beside
// this file; from the sources, tsx is registered here to load its TypeScript. Then the recorder
// runs with the thread's settings and port.
import { existsSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

// module-state: the thread's entry point: it only starts the recorder.
await start();

async function start() {
  const compiled = new URL('./recorder-worker.js', import.meta.url);
  if (!existsSync(compiled)) (await import('tsx/esm/api')).register();
  const { runRecorder } = await import(existsSync(compiled) ? compiled.href : './recorder-worker.ts');
  await runRecorder(workerData, parentPort);
}
