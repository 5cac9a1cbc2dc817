// Entry of the recorder thread. The kit runs its TypeScript through tsx, and a worker thread
// does not inherit the loader of the thread that starts it: register it here, then load the
// recorder itself.
import { register } from 'tsx/esm/api';

register();
await import('./recorder-worker.ts');
