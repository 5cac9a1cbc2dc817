// What a driver knows of where the interface's operations are and what their paths name: the API
// base path (rules/api-base.ts, one value), the names each place of a path holds (the document's,
// the management API's and the user's description's paths), and the user's OpenAPI description
// itself. Made once per driver and handed to judgeExchange.
import { once } from '../core/memo.ts';
import { type ApiBase, apiBaseOfRecording } from './api-base.ts';
import { knownPathNames, matchOperation, pathNamesWith } from './operations.ts';
import type { OpenApiDescription } from './openapi/description.ts';
import type { PathNames } from './path-names.ts';
import type { MatchedOperation } from './types.ts';

export class ApiLayout {
  readonly base: ApiBase;
  readonly names: PathNames;
  /** The user's description of the operations the document does not detail (--openapi). */
  readonly openapi: OpenApiDescription | undefined;

  /** `base`: the driver's (base_url, --target); without it, the servers `openapi` declares, else the document's. */
  constructor(options: { base?: ApiBase; openapi?: OpenApiDescription } = {}) {
    this.openapi = options.openapi;
    this.base = options.base ?? apiBaseOfRecording(options.openapi?.declaredBasePaths);
    this.names = options.openapi ? pathNamesWith(options.openapi.pathTemplates) : knownPathNames();
  }

  /** The operation an exchange calls (rules/operations.ts matchOperation), at this base, with these names. */
  match(method: string, url: string): MatchedOperation | undefined {
    return matchOperation(method, url, this.base, this.names);
  }
}

/** What the document alone says: /api/v2 after the tenant address, the known paths' names. */
export const documentLayout = once((): ApiLayout => new ApiLayout());
