// Looking for what is left of a secret in a text: its pieces, in the text as it stands and with
// the wrapping taken out (line breaks, escaped line breaks, indentation, column borders, rules).
import { MIN_SECRET_PIECE } from '../../core/secret-pieces.ts';

/** The pieces of `secret` at least `length` characters long that stand in `text`. */
export function piecesOf(text: string, secret: string, length = MIN_SECRET_PIECE): string[] {
  const pieces = new Set<string>();
  for (let i = 0; i + length <= secret.length; i++) pieces.add(secret.slice(i, i + length));
  const found = new Set<string>();
  for (let i = 0; i + length <= text.length; i++) {
    const window = text.slice(i, i + length);
    if (pieces.has(window)) found.add(window);
  }
  return [...found];
}

/** `text` with its wrapping taken out: what a reader gets by joining the lines of a wrapped value. */
export function unwrapped(text: string): string {
  return text
    .replace(/\\+[nrt]/g, '\n')
    .replace(/^[ \t|+=─-╿-]*[-=─-╿]{3,}[ \t|+=─-╿-]*$/gm, '')
    .replace(/[\s|─-╿\\]+/g, '');
}
