// Why a URL the user gave cannot be used, in words: `new URL` only says "Invalid URL".

/** The port of an absolute URL's authority, as written (digits only), or undefined. */
const AUTHORITY_PORT = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?(?:\[[^\]]*\]|[^/?#:]*):(\d+)(?:[/?#]|$)/i;

/** Why `value` is not a URL, said so that the user can fix it; undefined when it is one. */
export function urlProblem(value: string): string | undefined {
  const port = AUTHORITY_PORT.exec(value)?.[1];
  if (port !== undefined && Number(port) > 65535) return `port ${port} is above 65535`;
  try {
    new URL(value);
    return undefined;
  } catch {
    return 'not a valid URL';
  }
}
