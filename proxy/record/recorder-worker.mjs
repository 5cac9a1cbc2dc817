// Entry of the recorder thread. The kit runs its TypeScript through tsx, and a worker thread
// does not inherit the loader of the thread that starts it: register it here, then load the
// recorder itself and run it with the thread's settings and port.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

// module-state: the thread's entry point: it only starts the recorder.
await start();

async function start() {
  register();
  const { runRecorder } = await import('./recorder-worker.ts');
  await runRecorder(workerData, parentPort);
}
