/** A file that cannot be read as a recording; the message names the file and what is wrong. */
export class RecordingError extends Error {
  override name = 'RecordingError';
}

/** How a text that should be JSON begins, for a message: its first characters quoted, or "binary data". */
export function howItBegins(text: string): string {
  const start = text.slice(0, 20);
  // Control characters (other than blank space) or bytes that are not UTF-8: nothing worth quoting.
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/.test(start)) return 'binary data';
  return JSON.stringify(start);
}
