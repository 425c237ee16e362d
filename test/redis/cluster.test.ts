/**
 * Redis Cluster: a queue with `shards: 6` on a 3-master cluster of the test's own. Every script
 * touches one shard's keys only (one hash tag, one slot), so the cluster accepts them; the
 * shards land on different nodes; claims, acks, wake announcements and clear() work across them.
 */
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisTimeSortedQueue } from '../../src/redis/index.js';
import { OwnRedisCluster } from './own-redis-cluster.js';
import { describeRedis } from './redis-helper.js';

describeRedis('Redis Cluster', () => {
  let cluster: OwnRedisCluster;
  let client: Cluster;
  beforeAll(async () => {
    cluster = await OwnRedisCluster.start();
    client = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
    client.on('error', () => undefined);
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('spreads shards over the nodes and claims, acks and wakes across them', async () => {
    // A fixed prefix (the cluster is this test's own), so the shards' slots, and their nodes, are known.
    const queue = new RedisTimeSortedQueue<string, number>({ redis: client, prefix: 'cluster-test', shards: 6, lingerMs: 0 });
    const heard: number[] = [];
    queue.onWake((dueInMs) => heard.push(dueInMs));
    await queue.wakeReady();
    await Promise.all(Array.from({ length: 600 }, (_, i) => queue.publish(`customer-${i % 60}`, i)));
    expect(await queue.counts()).toEqual({ pending: 600, claimed: 0, keys: 60 });
    await queue.checkInvariants();
    const nodesWithData = [];
    for (const node of client.nodes('master')) if ((await node.dbsize()) > 0) nodesWithData.push(node);
    expect(nodesWithData.length).toBeGreaterThan(1);

    const seen: number[] = [];
    for (let batches = await queue.claim(50); batches.length > 0; batches = await queue.claim(50)) {
      for (const batch of batches) seen.push(...batch.values);
      await Promise.all(batches.map((batch) => queue.ack(batch)));
    }
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 600 }, (_, i) => i));
    expect(heard.length).toBeGreaterThan(0);
    await queue.clear();
    for (const node of client.nodes('master')) expect(await node.dbsize()).toBe(0);
    await queue.quit();
  }, 30_000);
});
