/** The error of a bad command line: the CLI prints its message and exits with code 2. */

/** A flag is unknown, misses its value, or has a value out of range; or the build lacks what a flag asks for. */
export class UsageError extends Error {
  /** Stable code, so callers never tell this error apart by its message. */
  readonly code = 'ERR_USAGE';
  /** The flag at fault, e.g. `--rate`; undefined for a stray positional argument. */
  readonly flag: string | undefined;

  constructor(flag: string | undefined, message: string) {
    super(message);
    this.name = 'UsageError';
    this.flag = flag;
  }
}
