// --openapi FILE, as validate and proxy take it: the user's description loaded once (a file that
// cannot be used is a usage error of one line), and what the console says of it.
import { loadOpenApiFile } from '../rules/openapi/load.ts';
import type { OpenApiDescription } from '../rules/openapi/description.ts';

/** The description named by --openapi, or undefined when the flag is absent. Throws OpenApiError (exit 2). */
export async function openApiOption(path: string | undefined): Promise<OpenApiDescription | undefined> {
  return path === undefined ? undefined : loadOpenApiFile(path);
}

/** "openapi: spec.yaml (OpenAPI 3.1, 212 operations): …", said once at start. */
export function openApiLine(openapi: OpenApiDescription): string {
  return `openapi: ${openapi.origin} (OpenAPI ${openapi.version}, ${openapi.operationCount} operations): the operations the document does not detail are checked against it`;
}

/** What of the description could not be used (a schema ajv cannot compile, an external $ref), first few. */
export function openApiProblemLines(openapi: OpenApiDescription | undefined, shown = 5): string[] {
  const problems = openapi?.problems() ?? [];
  const lines = problems.slice(0, shown).map((problem) => `openapi: not judged: ${problem}`);
  if (problems.length > shown) lines.push(`openapi: … and ${problems.length - shown} more parts of the description not judged`);
  return lines;
}
