// Which segments of an operation's path are names (kept in the operation's name) and which are
// identifiers ({id}): a segment is a name only where a known path has that name at that place. The
// known paths: the document's, the public management API's (schemas/management-api-paths.yaml) and
// the user's OpenAPI description's. A shape tells nothing: "cl_full", "org_acme" and "rs_main" are
// identifiers as much as "auth0|123", and "enabled_connections" is a name.
import { readKitYaml } from '../core/kit-documents.ts';
import { once } from '../core/memo.ts';

/** One place of the known paths: the names it may hold, and what follows an identifier there. */
interface Place {
  names: Map<string, Place>;
  identifier?: Place;
}

const newPlace = (): Place => ({ names: new Map() });
const TEMPLATED = /^\{[^{}]*\}$/;

export class PathNames {
  private readonly root: Place = newPlace();

  /** Templates after the API base path ("/users/{id}/roles"); a templated segment stands for any identifier. */
  constructor(templates: Iterable<string>) {
    for (const template of templates) this.add(template);
  }

  /**
   * Per segment (decoded once), whether it is a name at its place. Once a segment is at no known
   * place, none after it is: nothing names the places below an unknown one.
   */
  namesAt(segments: readonly string[]): boolean[] {
    let place: Place | undefined = this.root;
    return segments.map((segment) => {
      const named = place?.names.get(segment);
      place = named ?? place?.identifier;
      return named !== undefined;
    });
  }

  private add(template: string): void {
    let place = this.root;
    for (const segment of template.split('/').filter((s) => s !== '')) {
      if (TEMPLATED.test(segment)) {
        place = place.identifier ??= newPlace();
        continue;
      }
      let next = place.names.get(segment);
      if (!next) place.names.set(segment, (next = newPlace()));
      place = next;
    }
  }
}

/** The public management API's paths, as schemas/management-api-paths.yaml lists them. */
export const managementApiPaths = once((): readonly string[] => (readKitYaml('management-api-paths.yaml') as { paths: string[] }).paths);
