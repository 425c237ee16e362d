/**
 * Argument checks shared by every public entry point. Each throws {@link InvalidArgumentError}
 * naming the argument, what was expected and what was received; none has side effects.
 */
import { InvalidArgumentError } from './errors.js';

/** An integer >= 1 (`Infinity` is not accepted: use `undefined` for "no bound"). */
export function positiveInteger(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidArgumentError(name, 'a positive integer', value);
  }
  return value;
}

/** An integer >= 1, or `Infinity` for "no bound". */
export function positiveLimit(name: string, value: unknown): number {
  if (value === Number.POSITIVE_INFINITY) return value;
  return positiveInteger(name, value);
}

/** A finite number >= 0. */
export function nonNegativeNumber(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(name, 'a finite number >= 0', value);
  }
  return value;
}

/** A finite number > 0. */
export function positiveNumber(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidArgumentError(name, 'a finite number > 0', value);
  }
  return value;
}

/** A finite number. */
export function finiteNumber(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidArgumentError(name, 'a finite number', value);
  }
  return value;
}

/** A boolean. */
export function boolean(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw new InvalidArgumentError(name, 'a boolean', value);
  return value;
}

/** A function. */
export function func<F>(name: string, value: unknown): F {
  if (typeof value !== 'function') throw new InvalidArgumentError(name, 'a function', value);
  return value as F;
}

/** A plain options object, or `undefined` (read as `{}`). */
export function optionsObject<T extends object>(name: string, value: T | undefined): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(name, 'an options object', value);
  }
  return value;
}
