// vitest's node API is the heaviest import of the kit (≈ 1 s): `run` starts loading it before
// it starts the target and checks the credentials, so the two overlap.
import { once } from '../core/memo.ts';

export const loadVitestNode = once((): Promise<typeof import('vitest/node')> => import('vitest/node'));
