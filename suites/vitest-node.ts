// vitest's node API is the heaviest import of the kit (≈ 1 s): `run` starts loading it before
// it starts the target and checks the credentials, so the two overlap.
let vitestNode: Promise<typeof import('vitest/node')> | undefined;

export function loadVitestNode(): Promise<typeof import('vitest/node')> {
  vitestNode ??= import('vitest/node');
  return vitestNode;
}
