/** A file that cannot be read as a recording; the message names the file and what is wrong. */
export class RecordingError extends Error {
  override name = 'RecordingError';
}
