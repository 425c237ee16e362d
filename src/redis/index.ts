/**
 * `duebatch/redis`: the Redis store. One queue shared by many processes and machines, surviving
 * crashes. Needs the optional peer dependency `ioredis` (5.x) and Redis >= 6.2.
 */
export { RedisSortedQueue } from './redis-sorted-queue.js';
export { RedisTimeSortedQueue } from './redis-time-sorted-queue.js';
export { RedisBatchQueue } from './redis-batch-queue.js';
export type { RedisQueueOptions, RedisTimeSortedQueueOptions, RedisClient } from './redis-queue-options.js';
export { defaultRedisUrl } from './redis-queue-options.js';
export { jsonCodec, CodecError } from './codec.js';
export type { Codec } from './codec.js';
export { waitUntilDue } from './wake.js';
export type { WaitOptions, WakeListener, DueSource } from './wake.js';
export { createPushClient } from './push-client.js';
export type { RedisPushClient, RedisPushClientOptions } from './push-client.js';
export { RedisDelayStore } from './redis-delay-store.js';
export type { RedisDelayStoreOptions } from './redis-delay-store.js';
