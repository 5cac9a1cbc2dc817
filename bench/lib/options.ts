// The proxy benchmark's command line: switches and numeric options, read from process.argv.
export const argv = process.argv.slice(2);

export const flag = (name: string): boolean => argv.includes(name);

/** A numeric option's value; a value that is not a number above zero (or zero, for --warm-up) ends the run with a one-line error. */
export const option = (name: string, fallback: number): number => {
  const i = argv.indexOf(name);
  if (i === -1) return fallback;
  const value = Number(argv[i + 1]);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && name !== '--warm-up')) {
    console.error(`bench:proxy: ${name} wants a number above zero, got ${argv[i + 1] === undefined ? 'nothing' : `"${argv[i + 1]}"`}`);
    process.exit(2);
  }
  return value;
};

// Long enough for the JIT to have compiled each variant's hot paths: measured with --warm-up-curve,
// CPU per response settles after about 6 s for (b) and 9–12 s for (c) at 1,500 requests/s.
export const WARM_UP_SECONDS = option('--warm-up', 10);
