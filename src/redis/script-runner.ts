/**
 * Runs the queue's Lua scripts: `EVALSHA`, and `EVAL` when the server does not know the script
 * (first use, or after a restart emptied its script cache). Every failure reaches the caller as
 * a `StoreError` whose `cause` is the client's error.
 */
import { createHash } from 'node:crypto';
import { StoreError } from '../errors.js';
import type { RedisClient } from './redis-queue-options.js';

/** A Lua script and its SHA-1, as `EVALSHA` names it. */
export interface Script {
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
}

/** Wraps `lua` as a {@link Script} named `name` (the name shows in errors). */
export function defineScript(name: string, lua: string): Script {
  return { name, lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/** Argument of a script call: ioredis sends numbers and strings alike as bulk strings. */
export type ScriptArg = string | number;

type EvalFn = (script: string, numkeys: number, ...args: ScriptArg[]) => Promise<unknown>;

/** Runs `script` with `keys` and `args` on `client`. */
export async function runScript(client: RedisClient, script: Script, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
  const evalsha = client.evalsha.bind(client) as unknown as EvalFn;
  const evaluate = client.eval.bind(client) as unknown as EvalFn;
  try {
    try {
      return await evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return await evaluate(script.lua, keys.length, ...keys, ...args);
    }
  } catch (cause) {
    throw toStoreError(`Redis script ${script.name} failed`, cause);
  }
}

/** `cause` as a `StoreError` (a `StoreError` as it is), with the client's message appended. */
export function toStoreError(what: string, cause: unknown): StoreError {
  if (cause instanceof StoreError) return cause;
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new StoreError(`${what}: ${detail}`, { cause });
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
