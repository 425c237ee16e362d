/**
 * One shard of a Redis queue: its hash tag, its fixed keys, the arguments every script of it
 * takes, and the coalescers that turn a tick's publishes and acks into one script call each.
 */
import type { Clock } from '../time.js';
import { shardKeys } from './keyspace.js';
import { Coalescer } from './publish-coalescer.js';
import { numberArg } from './replies.js';
import { runScript, type Script, type ScriptArg } from './script-runner.js';
import { scripts } from './scripts/index.js';
import type { RedisClient } from './redis-queue-options.js';

/** What every shard of a queue shares. */
export interface ShardContext {
  readonly client: RedisClient;
  readonly clock: 'server' | Clock;
  readonly perKeyOrder: boolean;
  /** 's': a placed key is due now (sorted queue); 't': due at its sort key (time queue). */
  readonly kind: 's' | 't';
  readonly channel: string;
  readonly maxPending: number;
  readonly maxBatchSize: number;
  readonly lingerMs: number;
  readonly maxCoalesce: number;
}

/** A publish waiting for its shard's next flush: sort key ('' in a time queue), key, encoded value. */
export type PublishEntry = readonly [sortKey: string, key: string, value: string];

/** An ack waiting for its shard's next flush: batch id and token ('' = the current claim). */
export type AckEntry = readonly [id: string, token: string];

export class Shard {
  readonly keys: readonly string[];
  /** Resolves `true` when stored, `false` when refused for `maxPending`. */
  readonly publisher: Coalescer<PublishEntry, boolean>;
  /** Resolves with the ACK script's code for the entry. */
  readonly acker: Coalescer<AckEntry, string>;
  readonly #ctx: ShardContext;

  constructor(
    readonly index: number,
    readonly tag: string,
    ctx: ShardContext,
  ) {
    this.keys = shardKeys(tag);
    this.#ctx = ctx;
    this.publisher = new Coalescer((entries) => this.#publish(entries), ctx.maxCoalesce);
    this.acker = new Coalescer((entries) => this.#ack(entries), ctx.maxCoalesce);
  }

  /**
   * Runs `script` on this shard with the common arguments, then `args`. Publishes and acks still
   * waiting for the end of the tick are sent first, so calls reach Redis in the order they were made.
   */
  run(script: Script, args: readonly ScriptArg[] = []): Promise<unknown> {
    this.publisher.flushNow();
    this.acker.flushNow();
    return this.#run(script, args);
  }

  #run(script: Script, args: readonly ScriptArg[]): Promise<unknown> {
    const ctx = this.#ctx;
    const now = ctx.clock === 'server' ? '' : numberArg(ctx.clock.now());
    return runScript(ctx.client, script, this.keys, [now, ctx.perKeyOrder ? '1' : '0', this.index, ctx.kind, ctx.channel, ...args]);
  }

  async #publish(entries: PublishEntry[]): Promise<boolean[]> {
    const ctx = this.#ctx;
    const args: ScriptArg[] = [limitArg(ctx.maxPending), limitArg(ctx.maxBatchSize), ctx.lingerMs, entries.length];
    for (const entry of entries) args.push(entry[0], entry[1], entry[2]);
    const accepted = Number(await this.#run(scripts.publish, args));
    return entries.map((_, i) => i < accepted);
  }

  async #ack(entries: AckEntry[]): Promise<string[]> {
    const args: ScriptArg[] = [entries.length];
    for (const entry of entries) args.push(entry[0], entry[1]);
    const codes = await this.#run(scripts.ack, args);
    return (codes as unknown[]).map(String);
  }
}

/** A bound as a script argument: -1 for none. */
export function limitArg(limit: number | undefined): number {
  return limit === undefined || limit === Infinity ? -1 : limit;
}
