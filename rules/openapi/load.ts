// Reading the user's OpenAPI description from a file, JSON or YAML, into an OpenApiDescription.
import { readFile } from 'node:fs/promises';
import { YAMLParseError, parse as parseYaml } from 'yaml';
import { OpenApiDescription, OpenApiError } from './description.ts';

/**
 * YAML aliases a description may expand: enough for hand-written anchors, far too few for an
 * "exponential entity" document to blow up memory.
 */
const MAX_YAML_ALIASES = 100;

/** Reads, parses and outlines a description; every failure is an OpenApiError of one line naming the file. */
export async function loadOpenApiFile(path: string): Promise<OpenApiDescription> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new OpenApiError(`${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  return OpenApiDescription.from(parseDescription(text, path), path);
}

/** JSON when the text starts with "{" (JSON.parse is several times faster on large files), else YAML. */
function parseDescription(text: string, path: string): unknown {
  const content = text.replace(/^\uFEFF/, '');
  if (content.trimStart().startsWith('{')) {
    try {
      return JSON.parse(content);
    } catch (error) {
      throw new OpenApiError(`${path}: not valid JSON (${(error as Error).message.split('\n', 1)[0]})`);
    }
  }
  try {
    return parseYaml(content, { maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    if (!(error instanceof YAMLParseError)) throw new OpenApiError(`${path}: not valid YAML (${(error as Error).message.split('\n', 1)[0]})`);
    const line = error.linePos?.[0].line;
    const message = error.message.split('\n', 1)[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new OpenApiError(`${path}: not valid YAML (${line === undefined ? '' : `line ${line}: `}${message})`);
  }
}
